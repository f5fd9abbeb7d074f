//! Pieces of list and detail pages: the pager under a paged table, and the
//! disclosure that guards a delete.

use leptos::prelude::*;
use rapport_core::model::PageInfo;

use crate::erase::SyncChildren;

/// "Page n of m · k things" with links to the neighbouring pages. `href` gives
/// the link of a page number (from 0), keeping the list's filters.
#[component]
pub fn Pager(
    /// Where the shown page sits.
    info: PageInfo,
    /// What the list holds, plural: "users", "entries".
    noun: &'static str,
    /// The words of the two links, e.g. ("Previous", "Next") or ("Newer", "Older").
    words: (&'static str, &'static str),
    /// The link of a page.
    href: impl Fn(i64) -> String + 'static,
    /// The navigation's accessible name.
    #[prop(into)]
    label: String,
) -> impl IntoView {
    let page = info.page_number;
    view! {
        <nav class="pager" aria-label=label>
            {(page > 0).then(|| view! { <a href=href(page - 1) rel="prev">{words.0}</a> })}
            <span>{format!("Page {} of {} · {} {noun}", page + 1, info.total_pages.max(1), info.total_elements)}</span>
            {(page + 1 < info.total_pages).then(|| view! { <a href=href(page + 1) rel="next">{words.1}</a> })}
        </nav>
    }
}

/// A delete behind a disclosure, so that one click cannot delete and the page
/// needs no script to ask: a heading, a "Delete…" summary, what deleting does,
/// then the form (the children) with its own submit button.
#[component]
pub fn DangerZone(
    /// The heading, e.g. "Delete the user".
    title: &'static str,
    /// The summary that opens it, e.g. "Delete this user…".
    summary: &'static str,
    /// What deleting does.
    consequence: &'static str,
    children: SyncChildren,
) -> impl IntoView {
    view! {
        <section class="card danger-zone">
            <h2>{title}</h2>
            <details>
                <summary>{summary}</summary>
                <p>{consequence}</p>
                {children.view()}
            </details>
        </section>
    }
}
