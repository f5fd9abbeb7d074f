//! `/search?q=…`: the agents' search across customers and message text, from
//! the inbox's search box. Each hit opens its conversation; the matched words
//! stand out in the passage shown.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::erase::EraseView;
use crate::{
    api::search::{inbox_search, HitView, SearchView, HITS_PER_PAGE, SEARCH_PATH},
    components::{
        feedback::ErrorNote,
        layout::{agents, encode_query, Guard},
    },
};

/// The statuses to narrow to, as the form offers them.
const STATUSES: [(&str, &str); 4] = [
    ("", "Any status"),
    ("UNREAD", "Unread"),
    ("UNRESOLVED", "Unresolved"),
    ("DONE", "Done"),
];

/// `/search`.
#[component]
pub fn SearchPage() -> impl IntoView {
    let query = use_query_map();
    let param = move |name: &str| query.with(|q| q.get(name)).unwrap_or_default();
    let q = move || param("q");
    let status = move || param("status");
    let tag = move || param("tag");
    let mine = move || param("mine") == "1";
    let page = move || param("page").parse::<i64>().unwrap_or(0).max(0);
    let found = Resource::new(
        move || (q(), status(), mine(), tag(), page()),
        |(q, status, mine, tag, page)| async move {
            if q.trim().is_empty() {
                return Ok(None);
            }
            inbox_search(q, Some(status), Some(mine), Some(tag), Some(page))
                .await
                .map(Some)
        },
    );
    let href = move |page: i64| {
        format!(
            "{SEARCH_PATH}?q={}&status={}&tag={}{}&page={page}",
            encode_query(&q()),
            encode_query(&status()),
            encode_query(&tag()),
            if mine() { "&mine=1" } else { "" }
        )
    };
    view! {
        <Title text="Search" />
        <Guard allowed=agents>
            <p class="breadcrumb"><a href="/inbox">"Inbox"</a></p>
            <h1>"Search"</h1>
            <form method="get" action=SEARCH_PATH class="card search-form" role="search">
                <div class="field">
                    <label for="search-q">"Words"</label>
                    <input id="search-q" name="q" type="search" value=q maxlength="500" autocomplete="off"
                        placeholder="refund 1182" aria-describedby="search-q-hint" />
                    <p class="hint" id="search-q-hint">
                        "Customers' names, e-mail addresses and ids, and what was written. Each word matches the start of a word; all must match."
                    </p>
                </div>
                <div class="field-row">
                    <div class="field">
                        <label for="search-status">"Status"</label>
                        <select id="search-status" name="status">
                            {STATUSES.iter().map(|(value, label)| {
                                let selected = status() == *value;
                                view! { <option value=*value selected=selected>{*label}</option> }
                            }).collect_view()}
                        </select>
                    </div>
                    <div class="field">
                        <label for="search-tag">"Tag"</label>
                        <input id="search-tag" name="tag" type="text" value=tag maxlength="64" autocomplete="off" />
                    </div>
                    <label class="choice">
                        <input type="checkbox" name="mine" value="1" checked=mine />" Only mine"
                    </label>
                </div>
                <button type="submit" class="button primary">"Search"</button>
            </form>
            <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Searching…"</p> }>
                {move || Suspend::new(async move {
                    match found.await {
                        Ok(None) => ().erase(),
                        Ok(Some(view_)) => view! { <Hits found=view_ page=page() href /> }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Transition>
        </Guard>
    }
}

#[component]
fn Hits(found: SearchView, page: i64, href: impl Fn(i64) -> String + 'static) -> impl IntoView {
    if found.hits.is_empty() {
        return view! { <p class="empty" role="status">"Nothing found. Fewer or shorter words find more."</p> }.erase();
    }
    let shown_to = page * HITS_PER_PAGE + found.hits.len() as i64;
    let more = shown_to < found.total;
    view! {
        <p role="status">{format!("{} found", found.total)}</p>
        <ol class="search-hits" aria-label="Results">
            {found.hits.into_iter().map(|hit| view! { <Hit hit /> }).collect_view()}
        </ol>
        <nav class="pager" aria-label="Pages of results">
            {(page > 0).then(|| view! { <a href=href(page - 1)>"Previous"</a> })}
            {more.then(|| view! { " " <a href=href(page + 1)>"Next"</a> })}
        </nav>
    }
    .erase()
}

#[component]
fn Hit(hit: HitView) -> impl IntoView {
    let passage = hit
        .pieces
        .into_iter()
        .map(|(text, matched)| {
            if matched {
                view! { <mark>{text}</mark> }.erase()
            } else {
                text.erase()
            }
        })
        .collect_view();
    let badge = format!("badge status-{}", hit.status.to_lowercase());
    view! {
        <li class="search-hit">
            <a href=format!("/inbox/{}", hit.customer_id)>
                <span class="who">{hit.name}</span>
                " " <span class=badge>{hit.status}</span>
            </a>
            <p class="passage">
                <span class="muted">{if hit.in_message { "Message · " } else { "Customer · " }}<time>{hit.at}</time>" — "</span>
                {passage}
            </p>
        </li>
    }
}
