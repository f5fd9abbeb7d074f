//! Recorded visitor sessions (agents and up):
//!
//! - `/sessions`: the sessions the visitor script recorded, newest first, with
//!   their tags, filtered by a tag;
//! - `/sessions/{id}`: the replay, with a timeline, speed, idle time skipped,
//!   and a list of pages, errors and chat messages to jump to;
//! - `/sessions/{id}/live-view`: the visitor's page in real time.
//!
//! The player is the dashboard's `replay.js` (built from `rrweb-player` and
//! `@rrweb/replay` with the visitor script); it mounts itself on the
//! `data-rapport-replay` and `data-rapport-live` elements these pages render,
//! reading `/sessions/{id}/events` and `/sessions/{id}/live`.

use leptos::prelude::*;
use leptos_meta::{Link, Script, Title};
use leptos_router::hooks::use_query_map;

use crate::components::route::use_path_param;
use crate::erase::EraseView;
use crate::{
    api::recordings::{get_session, list_sessions, SessionView, SessionsPage, SESSIONS_PATH},
    components::{
        feedback::ErrorNote,
        layout::{agents, utc_time, Guard},
        lists::Pager,
    },
};

/// The player's files, loaded only by the pages that play.
#[component]
pub fn PlayerAssets() -> impl IntoView {
    view! {
        <Link rel="stylesheet" href="/visitor/replay.css" />
        <Script src="/visitor/replay.js" defer="defer" />
    }
}

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `replay.js`'s mount of every player element not mounted yet; throws
    /// (caught) while the script has not loaded.
    #[wasm_bindgen(js_namespace = RapportReplay, js_name = mountAll, catch)]
    fn replay_mount_all() -> Result<(), wasm_bindgen::JsValue>;
}

/// Mounts the player on the page's elements once this view is in the document
/// (after a client-side navigation the script has run already; on a first load
/// it mounts them itself when it runs).
fn mount_player() {
    #[cfg(feature = "hydrate")]
    request_animation_frame(|| {
        let _ = replay_mount_all();
    });
}

fn duration(seconds: Option<i64>) -> String {
    match seconds {
        Some(s) if s >= 3600 => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
        Some(s) => format!("{}m {:02}s", s / 60, s % 60),
        None => "—".into(),
    }
}

/// A session's reason in words; none until it ends (or never, for sessions
/// reported over REST).
fn reason(code: Option<&str>) -> &'static str {
    match code {
        Some("CHAT") => "Chat",
        Some("LIVE_VIEW") => "Watched live",
        Some("ERROR") => "Script error",
        Some("BROWSE") => "Browsing",
        Some(_) => "Other",
        None => "—",
    }
}

/// `/sessions`.
#[component]
pub fn SessionsPage() -> impl IntoView {
    let query = use_query_map();
    let tag = move || query.with(|q| q.get("tag")).unwrap_or_default();
    let page = move || {
        query
            .with(|q| q.get("page"))
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let listed = Resource::new(
        move || (tag(), page()),
        |(tag, page)| list_sessions(Some(tag), Some(page)),
    );
    view! {
        <Title text="Recorded sessions" />
        <Guard allowed=agents>
            <h1>"Recorded sessions"</h1>
            <p class="lead">"Visits the script on your website recorded. Inputs are always masked."</p>
            <form method="get" action=SESSIONS_PATH class="toolbar" role="search">
                <div class="field">
                    <label for="sessions-tag">"Tag"</label>
                    <input id="sessions-tag" name="tag" type="text" value=tag maxlength="64" />
                </div>
                <button type="submit" class="button secondary">"Filter"</button>
            </form>
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading sessions…"</p> }>
                {move || Suspend::new(async move {
                    match listed.await {
                        Ok(listed) => view! { <SessionList listed tag=tag() /> }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}

#[component]
fn SessionList(listed: SessionsPage, tag: String) -> impl IntoView {
    if listed.items.is_empty() {
        return view! {
            <p class="empty">"No recorded sessions yet. Embed the snippet from Settings → Workspace on your website."</p>
        }
        .erase();
    }
    let info = listed.page.clone();
    view! {
        <table class="table">
            <caption class="visually-hidden">"Recorded sessions, newest first"</caption>
            <thead>
                <tr><th scope="col">"Started"</th><th scope="col">"Visitor"</th><th scope="col">"First page"</th>
                    <th scope="col">"Pages"</th><th scope="col">"Length"</th><th scope="col">"Reason"</th>
                    <th scope="col">"Tags"</th></tr>
            </thead>
            <tbody>
                {listed.items.into_iter().map(|s| view! {
                    <tr>
                        // A full load: the player's script comes with the page.
                        <td><a href=format!("{SESSIONS_PATH}/{}", s.id) rel="external">{utc_time(&s.started_at, false)}</a></td>
                        <td>{s.external_id.clone().unwrap_or_else(|| s.visitor_id.clone())}</td>
                        <td class="url">{s.entry_url.clone().unwrap_or_default()}</td>
                        <td>{s.page_count}</td>
                        <td>{duration(s.duration_seconds)}</td>
                        <td>{reason(s.reason.as_deref())}</td>
                        <td>{s.tags.join(", ")}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        <Pager info noun="sessions" words=("Newer", "Older")
            href=move |page| format!("{SESSIONS_PATH}?tag={}&page={page}", tag)
            label="Pages of sessions" />
    }
    .erase()
}

/// The facts of a session above its player.
#[component]
fn SessionFacts(s: SessionView) -> impl IntoView {
    view! {
        <dl class="facts">
            <dt>"Visitor"</dt><dd><code>{s.external_id.clone().unwrap_or_else(|| s.visitor_id.clone())}</code></dd>
            <dt>"Started"</dt><dd>{utc_time(&s.started_at, false)}</dd>
            <dt>"Length"</dt><dd>{duration(s.duration_seconds)}</dd>
            <dt>"Pages"</dt><dd>{s.page_count}</dd>
            <dt>"Reason"</dt><dd>{reason(s.reason.as_deref())}</dd>
            <dt>"Tags"</dt><dd>{if s.tags.is_empty() { "—".to_string() } else { s.tags.join(", ") }}</dd>
        </dl>
    }
}

/// `/sessions/{id}`: the replay.
#[component]
pub fn SessionPage() -> impl IntoView {
    view! {
        <SessionFrame title="Session replay" body=|s: SessionView| view! {
            <section class="card">
                <SessionFacts s=s.clone() />
                <p><a class="button secondary" rel="external" href=format!("{SESSIONS_PATH}/{}/live-view", s.id)>"Watch live"</a></p>
            </section>
            <div class="replay" data-rapport-replay="" data-events-url=format!("/sessions/{}/events", s.id)></div>
        }.erase() />
    }
}

/// `/sessions/{id}/live-view`: the visitor's page now, for an agent.
#[component]
pub fn SessionLivePage() -> impl IntoView {
    view! {
        <SessionFrame title="Live view" body=|s: SessionView| view! {
            <section class="card">
                <SessionFacts s=s.clone() />
                <p><a rel="external" href=format!("{SESSIONS_PATH}/{}", s.id)>"Replay from the start"</a></p>
            </section>
            <LivePlayer session_id=s.id.clone() lang="en".to_string() cobrowse=true />
        }.erase() />
    }
}

/// What the replay and the live view share: the player's assets, the agents'
/// guard, the breadcrumb and heading, and the session of the URL, which
/// `body` shows.
#[component]
fn SessionFrame(title: &'static str, body: fn(SessionView) -> AnyView) -> impl IntoView {
    let id = use_path_param("id");
    let session = Resource::new(id, get_session);
    view! {
        <Title text=title />
        <PlayerAssets />
        <Guard allowed=agents>
            <p class="breadcrumb"><a href=SESSIONS_PATH>"Recorded sessions"</a></p>
            <h1>{title}</h1>
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading the session…"</p> }>
                {move || Suspend::new(async move {
                    match session.await {
                        Ok(s) => {
                            mount_player();
                            body(s)
                        }
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}

/// The live player of a session, in `lang` (en, de, jp, uk, ru). With
/// `cobrowse` (signed-in agents only, never a live-view link's grant) it also
/// offers co-browsing with the visitor, through `/sessions/{id}/cobrowse`.
#[component]
pub fn LivePlayer(session_id: String, lang: String, #[prop(optional)] cobrowse: bool) -> impl IntoView {
    mount_player();
    let cobrowse_url = cobrowse.then(|| format!("/sessions/{session_id}/cobrowse"));
    view! {
        <div class="replay live" data-rapport-live="" data-stream-url=format!("/sessions/{session_id}/live")
            data-cobrowse-url=cobrowse_url data-lang=lang></div>
    }
}
