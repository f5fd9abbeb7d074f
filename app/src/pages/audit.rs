//! Settings → Audit log (supervisors and admins): every write and sign-in of the
//! workspace, newest first, filtered by a plain GET form so each view has a link.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::erase::EraseView;
use crate::{
    api::audit::{read_audit_log, AuditPage, AuditQuery, AUDIT_PATH},
    components::{
        feedback::ErrorNote,
        layout::{encode_query, supervisors, utc_time, Guard},
        lists::Pager,
    },
};

/// `/settings/audit`.
#[component]
pub fn AuditPage() -> impl IntoView {
    view! {
        <Title text="Audit log" />
        <AuditBody />
    }
}

#[component]
fn AuditBody() -> impl IntoView {
    let query = use_query_map();
    let request = move || {
        let q = |k: &str| query.with(|m| m.get(k).unwrap_or_default());
        AuditQuery {
            from: q("from"),
            to: q("to"),
            actor: q("actor"),
            action: q("action"),
            page: q("page").parse().unwrap_or(0),
        }
    };
    // Created outside the guard's `Suspense` (see `Guard`).
    let log = Resource::new(request, read_audit_log);
    view! {
        <Guard allowed=supervisors>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Audit log"</h1>
            <p class="lead">"Who changed what, when, from where. Every write through the API or the dashboard, and every sign-in."</p>
            <section class="card">
                <form method="get" action=AUDIT_PATH class="field-row" aria-label="Filter the audit log">
                    <div class="field">
                        <label for="audit-from">"From"</label>
                        <input id="audit-from" name="from" type="date" value=move || request().from />
                    </div>
                    <div class="field">
                        <label for="audit-to">"To"</label>
                        <input id="audit-to" name="to" type="date" value=move || request().to />
                    </div>
                    <div class="field">
                        <label for="audit-actor">"Who (e-mail or id)"</label>
                        <input id="audit-actor" name="actor" type="search" value=move || request().actor autocomplete="off" />
                    </div>
                    <div class="field">
                        <label for="audit-action">"Action"</label>
                        <input id="audit-action" name="action" type="search" value=move || request().action
                            placeholder="user.* or webhook.create" autocomplete="off" />
                    </div>
                    <button type="submit" class="button secondary">"Filter"</button>
                </form>
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading the log…"</p> }>
                    {move || Suspend::new(async move {
                        match log.await {
                            Ok(page) if page.entries.is_empty() => view! {
                                <p class="empty">"Nothing matches these filters."</p>
                            }.erase(),
                            Ok(page) => view! { <AuditTable page query=request() /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Transition>
            </section>
        </Guard>
    }
}

fn page_link(query: &AuditQuery, page: i64) -> String {
    let mut url = format!("{AUDIT_PATH}?page={page}");
    for (key, value) in [
        ("from", &query.from),
        ("to", &query.to),
        ("actor", &query.actor),
        ("action", &query.action),
    ] {
        if !value.is_empty() {
            url.push_str(&format!("&{key}={}", encode_query(value)));
        }
    }
    url
}

#[component]
fn AuditTable(page: AuditPage, query: AuditQuery) -> impl IntoView {
    let info = page.page.clone();
    view! {
        <div class="table-wrap">
            <table>
                <caption class="visually-hidden">"Audit log entries, newest first"</caption>
                <thead>
                    <tr>
                        <th scope="col">"When"</th>
                        <th scope="col">"Who"</th>
                        <th scope="col">"Action"</th>
                        <th scope="col">"Object"</th>
                        <th scope="col">"From"</th>
                    </tr>
                </thead>
                <tbody>
                    {page
                        .entries
                        .into_iter()
                        .map(|e| view! {
                            <tr>
                                <td>{utc_time(&e.at, true)}</td>
                                <td>
                                    {e.actor_email.clone().unwrap_or_else(|| e.actor_id.clone())}
                                    <br /><small>{e.actor_type.clone()}</small>
                                </td>
                                <td><code>{e.action.clone()}</code></td>
                                <td>{e.resource_type.clone()}" "<code class="id">{e.resource_id.clone().unwrap_or_default()}</code></td>
                                <td>
                                    {e.ip.clone().unwrap_or_default()}
                                    {e.request_id.clone().map(|r| view! { <br /><small title="Request id">{r}</small> })}
                                </td>
                            </tr>
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
        <Pager info noun="entries" words=("Newer", "Older") href=move |page| page_link(&query, page)
            label="Pages of the audit log" />
    }
}
