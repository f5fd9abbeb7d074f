//! `/links` (agents): generate co-browsing links for a URL, and a public
//! live-view link for a recorded visitor session. Both forms work without
//! JavaScript; the generated links then reach the page once, in the flash cookie.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{components::Form, hooks::use_query_map};

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::links::{
        recent_sessions, take_generated_links, GenerateCobrowseLinks, GenerateLiveviewLink, GeneratedCobrowse,
        GeneratedLiveView, SessionChoice, LINKS_PATH,
    },
    components::{
        copy::CopyField,
        feedback::{action_problem, field_invalid, ActionError, ErrorNote, FieldMessage},
        layout::{agents, utc_time, Guard},
    },
};

/// Live-view UI languages, as the API names them, with their names.
const LANGUAGES: [(&str, &str); 5] = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("jp", "日本語"),
    ("uk", "Українська"),
    ("ru", "Русский"),
];

/// `/links`.
#[component]
pub fn LinksPage() -> impl IntoView {
    let flashed = Resource::new(|| (), |_| take_generated_links());
    // Created here, outside the guard's `Suspense` (see `Guard`).
    let query = use_query_map();
    let sessions = Resource::new(
        move || query.with(|q| q.get("tag")).filter(|t| !t.is_empty()),
        recent_sessions,
    );
    view! {
        <Title text="Links" />
        <Guard allowed=agents>
            <h1>"Links"</h1>
            <p class="lead">"Generate links to browse together with a customer, or to watch a visitor's session live."</p>
            <div class="two-columns">
                <CobrowseCard flashed />
                <LiveViewCard flashed sessions />
            </div>
        </Guard>
    }
}

type Flashed = Resource<Result<crate::api::links::Generated, ServerFnError>>;

#[component]
fn CobrowseCard(flashed: Flashed) -> impl IntoView {
    let generate = FormAction::<GenerateCobrowseLinks>::new();
    let problem = action_problem(generate.value());
    view! {
        <section class="card" aria-labelledby="cobrowse-title">
            <h2 id="cobrowse-title">"Co-browsing"</h2>
            <p>"You open the host link; the customer opens the join link. Both work for 24 hours."</p>
            <PostForm action=generate>
                <div class="field">
                    <label for="cobrowse-url">"Start at URL"</label>
                    <input id="cobrowse-url" name="url" type="url" required=true maxlength="2048"
                        placeholder="https://shop.example.com/checkout" autocomplete="off"
                        aria-invalid=field_invalid(problem, "url") aria-describedby="cobrowse-url-error" />
                    <FieldMessage problem field="url" id="cobrowse-url-error" />
                </div>
                <button type="submit" class="button primary" disabled=move || generate.pending().get()>
                    "Generate co-browsing links"
                </button>
            </PostForm>
            <ActionError value=generate.value() />
            {move || generate.value().get().and_then(Result::ok).map(|links| view! { <CobrowseResult links /> })}
            <Suspense>
                {move || Suspend::new(async move {
                    flashed.await.ok().and_then(|g| g.cobrowse).map(|links| view! { <CobrowseResult links /> })
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn CobrowseResult(links: GeneratedCobrowse) -> impl IntoView {
    view! {
        <div class="generated" role="status">
            <p>"Links for " <code>{links.url.clone()}</code> ", valid until " {utc_time(&links.expires_at, false)} "."</p>
            <p class="copy-label">"Host link (yours)"</p>
            <CopyField label="host link" value=links.host_link.clone() />
            <p class="copy-label">"Join link (for the customer)"</p>
            <CopyField label="join link" value=links.join_link />
            <p><a href=links.host_link target="_blank" rel="noopener">"Open the host link"</a></p>
        </div>
    }
}

#[component]
fn LiveViewCard(flashed: Flashed, sessions: Resource<Result<Vec<SessionChoice>, ServerFnError>>) -> impl IntoView {
    let generate = FormAction::<GenerateLiveviewLink>::new();
    let problem = action_problem(generate.value());
    let query = use_query_map();
    let tag = move || query.with(|q| q.get("tag")).filter(|t| !t.is_empty());
    // The tag filter is the router's `Form`: filtering navigates in place, so
    // links generated on this page stay (without JavaScript it is a plain GET form).
    view! {
        <section class="card" aria-labelledby="liveview-title">
            <h2 id="liveview-title">"Live view"</h2>
            <p>"The public link opens the live view of this one session on your behalf, and nothing else of the dashboard. It works once, within 10 minutes; the view it opens lapses after 15 minutes unused, and after 4 hours in any case."</p>
            <Form method="get" action=LINKS_PATH noscroll=true attr:class="field-row">
                <div class="field">
                    <label for="session-tag">"Only sessions tagged"</label>
                    <input id="session-tag" name="tag" type="search" value=tag autocomplete="off" />
                </div>
                <button type="submit" class="button secondary">"Filter"</button>
            </Form>
            <PostForm action=generate>
                <fieldset aria-describedby="session-error">
                    <legend>"Session"</legend>
                    <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading sessions…"</p> }>
                        {move || Suspend::new(async move {
                            match sessions.await {
                                Ok(list) if list.is_empty() => view! {
                                    <p class="empty">"No recorded sessions yet. They appear here once the visitor script records them."</p>
                                }.erase(),
                                Ok(list) => view! { <SessionPicker sessions=list /> }.erase(),
                                Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                            }
                        })}
                    </Suspense>
                    <FieldMessage problem field="sessionId" id="session-error" />
                </fieldset>
                <div class="field-row">
                    <div class="field">
                        <label for="liveview-language">"Language"</label>
                        <select id="liveview-language" name="language" aria-invalid=field_invalid(problem, "language")>
                            {LANGUAGES
                                .into_iter()
                                .map(|(code, name)| view! { <option value=code>{name}</option> })
                                .collect_view()}
                        </select>
                    </div>
                    <button type="submit" class="button primary" disabled=move || generate.pending().get()>
                        "Generate live-view link"
                    </button>
                </div>
            </PostForm>
            <ActionError value=generate.value() />
            {move || generate.value().get().and_then(Result::ok).map(|link| view! { <LiveViewResult link /> })}
            <Suspense>
                {move || Suspend::new(async move {
                    flashed.await.ok().and_then(|g| g.liveview).map(|link| view! { <LiveViewResult link /> })
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn SessionPicker(sessions: Vec<SessionChoice>) -> impl IntoView {
    view! {
        <ul class="choices">
            {sessions
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    let id = format!("session-{i}");
                    view! {
                        <li>
                            <input type="radio" id=id.clone() name="session_id" value=s.id.clone() required=true checked={i == 0} />
                            <label for=id>
                                <strong>{s.visitor_id.clone()}</strong>
                                {s.live.then(|| view! { " " <span class="badge ok">"Live"</span> })}
                                <br />
                                <small>
                                    {format!("{} · {} pages", s.started_at, s.page_count)}
                                    {s.entry_url.clone().map(|u| format!(" · {u}"))}
                                    {(!s.tags.is_empty()).then(|| format!(" · {}", s.tags.join(", ")))}
                                </small>
                            </label>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

#[component]
fn LiveViewResult(link: GeneratedLiveView) -> impl IntoView {
    view! {
        <div class="generated" role="status">
            <p>"Live-view link for session " <code>{link.session_id.clone()}</code> ", valid until " {utc_time(&link.expires_at, false)} "."</p>
            <CopyField label="live-view link" value=link.link />
        </div>
    }
}
