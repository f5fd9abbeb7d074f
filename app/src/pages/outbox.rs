//! Settings → Mail outbox (admins): every mail Rapport wrote, newest first, with
//! its text and whether it left. Without an SMTP server, mail stays here to be
//! read; with one, a mail that failed can be sent again.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::mail::{list_outbox, MailView, Outbox, RetryMail, OUTBOX_PATH},
    components::{
        feedback::{ActionError, ErrorNote},
        layout::{admins, utc_time, Guard},
        lists::Pager,
    },
};

/// `/settings/outbox`.
#[component]
pub fn OutboxPage() -> impl IntoView {
    let retry = FormAction::<RetryMail>::new();
    let query = use_query_map();
    let page = move || {
        query
            .with(|q| q.get("page"))
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let outbox = Resource::new(
        move || (page(), retry.version().get()),
        |(page, _)| list_outbox(Some(page)),
    );
    view! {
        <Title text="Mail outbox" />
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Mail outbox"</h1>
            <ActionError value=retry.value() />
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading mail…"</p> }>
                {move || Suspend::new(async move {
                    match outbox.await {
                        Ok(outbox) => view! { <MailList outbox retry /> }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}

fn status_text(mail: &MailView, smtp: bool) -> String {
    match mail.status.as_str() {
        "SENT" => format!(
            "Sent {}",
            mail.sent_at.as_deref().map(|t| utc_time(t, false)).unwrap_or_default()
        ),
        "FAILED" => format!("Failed after {} attempts", mail.attempts),
        _ if !smtp => "Kept here".into(),
        _ if mail.attempts > 0 => format!("Retrying ({} attempts so far)", mail.attempts),
        _ => "Waiting to be sent".into(),
    }
}

#[component]
fn MailList(outbox: Outbox, retry: FormAction<RetryMail>) -> impl IntoView {
    let smtp = outbox.delivery == "SMTP";
    let lead = if smtp {
        "Mail goes out through the configured SMTP server. Each mail is tried up to six times over about two hours."
    } else {
        "No SMTP server is configured (RAPPORT_SMTP_URL), so mail is kept here instead of being sent. Nothing is lost: configure one and pending mail goes out."
    };
    let info = outbox.page.clone();
    view! {
        <p class="lead">{lead}</p>
        {if outbox.mails.is_empty() {
            view! { <p class="empty">"No mail yet. Appointment invitations, alert mails and chat transcripts appear here."</p> }.erase()
        } else {
            view! {
                <ul class="mail-list">
                    {outbox.mails.into_iter().map(|mail| {
                        let status = status_text(&mail, smtp);
                        let can_retry = smtp && mail.status != "SENT";
                        let id = mail.id.clone();
                        view! {
                            <li class="card">
                                <details>
                                    <summary>
                                        <strong>{mail.subject.clone()}</strong>
                                        <span class="mail-meta">{format!("To {} · written {} · {status}", mail.to, utc_time(&mail.created_at, false))}</span>
                                    </summary>
                                    <pre class="mail-body">{mail.body.clone()}</pre>
                                    {mail.last_error.clone().map(|e| view! { <p class="note error">{format!("Last attempt: {e}")}</p> })}
                                    {can_retry.then(|| view! {
                                        <PostForm action=retry>
                                            <input type="hidden" name="id" value=id />
                                            <button type="submit" class="button secondary small">"Send now"</button>
                                        </PostForm>
                                    })}
                                </details>
                            </li>
                        }
                    }).collect_view()}
                </ul>
                <Pager info noun="mails" words=("Newer", "Older") href=|page| format!("{OUTBOX_PATH}?page={page}") label="Pages of mail" />
            }.erase()
        }}
    }
}
