//! Pages that generated links open: co-browsing sessions, live view, conferences.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::route::use_path_param;
use crate::erase::EraseView;
use crate::{
    api::links::{cobrowse_session, join_info, liveview_session},
    components::feedback::ErrorNote,
    pages::sessions::{LivePlayer, PlayerAssets},
};

fn format_time(rfc3339: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|_| rfc3339.to_string())
}

/// `/cobrowse/{id}?token=…`: a universal co-browsing session, for its host or
/// a guest. The shared browser itself is `cobrowse.js` (mounted on the
/// `data-rapport-cobrowse` element), which connects to `/cobrowse/{id}/ws` with
/// the link's token; this page says what the session is, or why the link does
/// not open.
#[component]
pub fn CobrowsePage() -> impl IntoView {
    let id = use_path_param("id");
    let query = use_query_map();
    let session = Resource::new(
        move || (id(), query.with(|q| q.get("token").unwrap_or_default())),
        |(id, token)| cobrowse_session(id, token),
    );
    view! {
        <Title text="Co-browsing" />
        <leptos_meta::Link rel="stylesheet" href="/visitor/cobrowse.css" />
        <leptos_meta::Script src="/visitor/cobrowse.js" defer="defer" />
        <main id="main" class="page">
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Opening the session…"</p> }>
                {move || Suspend::new(async move {
                    match session.await {
                        Ok(s) => {
                            let (id, token) = (
                                untrack(id),
                                query.with_untracked(|q| q.get("token").unwrap_or_default()),
                            );
                            view! {
                                <section class="card">
                                    <p class="breadcrumb">"Universal Co-Browsing"</p>
                                    <h1>{if s.host { "You are hosting this session" } else { "You are joining a session" }}</h1>
                                    <dl class="facts">
                                        <dt>"Started at"</dt><dd>{s.url.clone()}</dd>
                                        {s.host_email.clone().map(|h| view! { <dt>"Host"</dt><dd>{h}</dd> })}
                                        <dt>"Link valid until"</dt><dd>{format_time(&s.expires_at)}</dd>
                                    </dl>
                                    <p class="note">
                                        {if s.host {
                                            "Share the join link with the people you browse with, and keep this host link to yourself. You have control, and can hand it to a guest."
                                        } else {
                                            "Everyone here sees the same page. The host has control and can hand it to you."
                                        }}
                                    </p>
                                </section>
                                {match s.unavailable.clone() {
                                    Some(reason) => view! {
                                        <section class="card empty-state" role="alert">
                                            <h2>"Co-browsing is not available on this server"</h2>
                                            <p>{reason}</p>
                                        </section>
                                    }.erase(),
                                    None => {
                                        mount_cobrowse();
                                        view! {
                                            <section class="card cobrowse" aria-label="Shared browser session"
                                                data-rapport-cobrowse=""
                                                data-ws-url=format!("/cobrowse/{id}/ws?token={}", urlencoding_token(&token))
                                                data-role=if s.host { "host" } else { "guest" }></section>
                                        }.erase()
                                    }
                                }}
                            }.erase()
                        }
                        Err(e) => view! {
                            <section class="card empty-state">
                                <h1>"This co-browsing link does not work"</h1>
                                <ErrorNote error=e.to_string() />
                                <p>"It may have expired, or its session has ended. Ask for a new link."</p>
                            </section>
                        }.erase(),
                    }
                })}
            </Suspense>
        </main>
    }
}

/// A link token for a query string: tokens are URL-safe already, so anything
/// else is dropped rather than passed on.
fn urlencoding_token(token: &str) -> String {
    token
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .collect()
}

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `cobrowse.js`'s mount of every co-browsing element not mounted yet;
    /// throws (caught) while the script has not loaded.
    #[wasm_bindgen(js_namespace = RapportCobrowse, js_name = mountAll, catch)]
    fn cobrowse_mount_all() -> Result<(), wasm_bindgen::JsValue>;
}

/// Mounts the shared browser once its element is in the document (on a first
/// load `cobrowse.js` mounts it itself when it runs).
fn mount_cobrowse() {
    #[cfg(feature = "hydrate")]
    request_animation_frame(|| {
        let _ = cobrowse_mount_all();
    });
}

/// Labels of the live-view page in its five languages.
fn label(lang: &str, key: &str) -> &'static str {
    match (lang, key) {
        ("de", "title") => "Live-Ansicht",
        ("de", "visitor") => "Besucher",
        ("de", "pages") => "Seiten",
        ("de", "started") => "Beginn",
        ("de", "tags") => "Tags",
        ("jp", "title") => "ライブビュー",
        ("jp", "visitor") => "訪問者",
        ("jp", "pages") => "ページ",
        ("jp", "started") => "開始",
        ("jp", "tags") => "タグ",
        ("uk", "title") => "Перегляд наживо",
        ("uk", "visitor") => "Відвідувач",
        ("uk", "pages") => "Сторінки",
        ("uk", "started") => "Початок",
        ("uk", "tags") => "Теги",
        ("ru", "title") => "Просмотр в реальном времени",
        ("ru", "visitor") => "Посетитель",
        ("ru", "pages") => "Страницы",
        ("ru", "started") => "Начало",
        ("ru", "tags") => "Теги",
        (_, "title") => "Live view",
        (_, "visitor") => "Visitor",
        (_, "pages") => "Pages",
        (_, "started") => "Started",
        _ => "Tags",
    }
}

/// `/liveview/{id}?lang=…`: live view of a visitor session. It stands outside the
/// dashboard's layout: it opens for a live-view grant (an opened live-view link)
/// as well as for a signed-in agent, and a grant reaches nothing else, so the page
/// offers no navigation into the dashboard.
#[component]
pub fn LiveViewPage() -> impl IntoView {
    let id = use_path_param("id");
    let query = use_query_map();
    let lang = move || query.with(|q| q.get("lang")).unwrap_or_else(|| "en".into());
    let session = Resource::new(id, liveview_session);
    view! {
        <Title text=move || label(&lang(), "title").to_string() />
        <PlayerAssets />
        <main id="main" class="page">
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let l = lang();
                    match session.await {
                        Ok(s) => view! {
                            <div lang=crate::language::html_lang(&l)>
                                <h1>{label(&l, "title")}</h1>
                                <section class="card">
                                    <dl class="facts">
                                        <dt>{label(&l, "visitor")}</dt><dd><code>{s.visitor_id.clone()}</code></dd>
                                        <dt>{label(&l, "started")}</dt><dd>{s.started_at.clone()}</dd>
                                        <dt>{label(&l, "pages")}</dt><dd>{s.page_count}</dd>
                                        <dt>{label(&l, "tags")}</dt><dd>{s.tags.join(", ")}</dd>
                                    </dl>
                                    {s.entry_url.clone().map(|u| view! { <p><a href=u.clone() rel="noopener noreferrer">{u.clone()}</a></p> })}
                                </section>
                                <LivePlayer session_id=untrack(id) lang=l.clone() />
                            </div>
                        }.erase(),
                        Err(e) => view! {
                            <section class="card empty-state" lang="en">
                                <h1>"This live view is not open to you"</h1>
                                <p>"A live-view link works once and its view lapses after a while. Ask for a new link, or sign in to the dashboard."</p>
                                <ErrorNote error=e.to_string() />
                                <p><a href="/login">"Sign in"</a></p>
                            </section>
                        }.erase(),
                    }
                })}
            </Suspense>
        </main>
    }
}

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `meet.js`'s mount of every conference element not mounted yet; throws
    /// (caught) while the script has not loaded.
    #[wasm_bindgen(js_namespace = RapportMeet, js_name = mountAll, catch)]
    fn meet_mount_all() -> Result<(), wasm_bindgen::JsValue>;
}

/// Mounts the conference once its element is in the document (on a first
/// load `meet.js` mounts it itself when it runs).
fn mount_meet() {
    #[cfg(feature = "hydrate")]
    request_animation_frame(|| {
        let _ = meet_mount_all();
    });
}

/// `/join/{token}`: an appointment's conference, as its attendees see it.
#[component]
pub fn JoinPage() -> impl IntoView {
    let token = use_path_param("token");
    let info = Resource::new(token, join_info);
    view! {
        <Title text="Join" />
        <leptos_meta::Link rel="stylesheet" href="/visitor/meet.css" />
        <leptos_meta::Script src="/visitor/meet.js" defer="defer" />
        <main id="main" class="page narrow">
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match info.await {
                        Ok(j) => {
                            let state = match j.state.as_str() {
                                "open" => "The conference is open.",
                                "not_yet" => "The conference has not opened yet.",
                                "ended" => "This conference has ended.",
                                _ => "This link has been disabled by the organiser.",
                            };
                            view! {
                                <section class="card">
                                    <p class="breadcrumb">"Video conference"</p>
                                    <h1>{j.title.clone()}</h1>
                                    <p class="note" role="status">{state}</p>
                                    <dl class="facts">
                                        <dt>"Starts"</dt><dd>{format!("{} ({})", format_time(&j.starts_at), j.timezone)}</dd>
                                        <dt>"Length"</dt><dd>{format!("{} minutes", j.duration_minutes)}</dd>
                                        <dt>"Link works"</dt><dd>{format!("{} – {}", format_time(&j.valid_from), format_time(&j.valid_until))}</dd>
                                        {j.waiting_room.then(|| view! { <dt>"Waiting room"</dt><dd>"The organiser lets you in."</dd> })}
                                        {j.has_password.then(|| view! { <dt>"Password"</dt><dd>"You will be asked for the password."</dd> })}
                                    </dl>
                                </section>
                                // The call itself (`meet.js`): pre-join, then the conference,
                                // only while the link works.
                                {(j.state == "open").then(|| {
                                    mount_meet();
                                    let token = untrack(token);
                                    view! {
                                        <section class="card meet" aria-label="Conference"
                                            data-rapport-meet="" data-ws-url=format!("/join/{token}/ws")
                                            data-password=j.has_password.to_string() data-title=j.title.clone()></section>
                                    }
                                })}
                            }.erase()
                        }
                        Err(e) => view! {
                            <section class="card empty-state">
                                <h1>"This conference link does not work"</h1>
                                <ErrorNote error=e.to_string() />
                            </section>
                        }.erase(),
                    }
                })}
            </Suspense>
        </main>
    }
}
