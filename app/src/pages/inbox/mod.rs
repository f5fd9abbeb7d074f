//! `/inbox` (agents and up): conversations by status with their waiting counts,
//! the open thread with every message type, reply, assignment and status, and
//! the customer's page, language and tags (see [`customer`]), why
//! a conversation was routed and each waiting one's SLA countdown (see
//! [`routing`]).
//!
//! The view is in the URL (`?status=UNRESOLVED&mine=1&c=<customer>`), so every
//! state is a link and every form works without JavaScript. `/inbox/<customer>` is
//! the link Rapport hands out (the webhooks' Conversation `url`): the inbox with
//! that conversation open. Once hydrated, the
//! page follows `GET /inbox/events`: a change reloads the list, and the thread
//! when it is the open one. While the stream is down the page says so, and on
//! reconnecting it reloads both, since events in between are lost.

pub mod blocks;
pub mod customer;
#[cfg(feature = "hydrate")]
mod live;
pub mod message;
pub mod notes;
pub mod presence;
pub mod routing;

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::inbox::{
        inbox_assignees, inbox_list, inbox_thread, Assignees, InboxAssign, InboxCall, InboxNote, InboxReply, InboxRow,
        InboxStatus, InboxTags, ThreadView, INBOX_LIMIT, INBOX_MOST_SHOWN, INBOX_PATH,
    },
    components::{
        feedback::{action_problem, field_invalid, reset_on_success, ActionError, ErrorNote, FieldMessage},
        layout::{agents, encode_query, Guard},
    },
};
use blocks::{BlockPicker, Draft};
use customer::CustomerFacts;
use message::{AttachForm, MessageItem};
use notes::{NoteForm, NoteItem};
use presence::{typing_signal, LiveMarks, SeenMark, TypingNotes};
use routing::{ticking_clock, RoutingWhy, SlaCountdown};

/// The status tabs: wire value and label.
const TABS: [(&str, &str); 3] = [("UNREAD", "Unread"), ("UNRESOLVED", "Unresolved"), ("DONE", "Done")];

/// The inbox's view: tab, "only mine", how many conversations, open conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InboxState {
    status: String,
    mine: bool,
    shown: i64,
    open: Option<String>,
}

impl InboxState {
    /// The URL of this view.
    fn href(&self) -> String {
        let mut href = format!("{INBOX_PATH}?status={}", self.status);
        if self.mine {
            href.push_str("&mine=1");
        }
        if self.shown != INBOX_LIMIT {
            href.push_str(&format!("&shown={}", self.shown));
        }
        if let Some(c) = &self.open {
            href.push_str("&c=");
            href.push_str(&encode_query(c));
        }
        href
    }
}

/// `/inbox`, and `/inbox/:id` with that customer's conversation open.
#[component]
pub fn InboxPage() -> impl IntoView {
    let query = use_query_map();
    let params = use_params_map();
    let state = Memo::new(move |_| {
        let q = query.read();
        let linked = params.read().get("id").filter(|c| !c.is_empty());
        let status = q
            .get("status")
            .filter(|s| TABS.iter().any(|(t, _)| t == s))
            .unwrap_or_else(|| "UNREAD".into());
        InboxState {
            status,
            mine: q.get("mine").is_some_and(|v| v == "1"),
            shown: q
                .get("shown")
                .and_then(|n| n.parse().ok())
                .unwrap_or(INBOX_LIMIT)
                .clamp(1, INBOX_MOST_SHOWN),
            open: q.get("c").filter(|c| !c.is_empty()).or(linked),
        }
    });
    // Bumped by live events: every change reloads the list, one of the open
    // conversation reloads the thread too.
    let list_tick = RwSignal::new(0u32);
    let thread_tick = RwSignal::new(0u32);
    let connected = RwSignal::new(None::<bool>);
    let marks = LiveMarks::default();
    let reply = FormAction::<InboxReply>::new();
    let status = FormAction::<InboxStatus>::new();
    let assign = FormAction::<InboxAssign>::new();
    let tags = FormAction::<InboxTags>::new();
    let call = FormAction::<InboxCall>::new();
    let note = FormAction::<InboxNote>::new();
    let changed = move || {
        (
            note.version().get(),
            reply.version().get(),
            status.version().get(),
            assign.version().get(),
            tags.version().get(),
            call.version().get(),
        )
    };
    let list = Resource::new(
        move || (state.get(), list_tick.get(), changed()),
        |(s, ..)| inbox_list(s.status, s.mine, Some(s.shown)),
    );
    let thread = Resource::new(
        move || (state.get().open, thread_tick.get(), changed()),
        |(open, ..)| async move {
            match open {
                Some(id) => inbox_thread(id).await.map(Some),
                None => Ok(None),
            }
        },
    );
    let assignees = Resource::new(|| (), |_| inbox_assignees());
    #[cfg(feature = "hydrate")]
    live::follow(state, list_tick, thread_tick, connected, marks);
    #[cfg(not(feature = "hydrate"))]
    let _ = (list_tick, thread_tick);

    view! {
        <Title text="Inbox" />
        <Guard allowed=agents>
            <div class="page-head">
                <h1>"Inbox"</h1>
                <LiveState connected />
            </div>
            <div class="inbox" class:thread-open=move || state.get().open.is_some()>
                <section class="inbox-list card" aria-labelledby="inbox-list-title">
                    <h2 id="inbox-list-title" class="visually-hidden">"Conversations"</h2>
                    <form method="get" action="/search" role="search" class="inbox-search">
                        <label for="inbox-search" class="visually-hidden">"Search conversations"</label>
                        <input id="inbox-search" type="search" name="q" maxlength="500" placeholder="Search names and messages" />
                        <button type="submit" class="button secondary small">"Search"</button>
                    </form>
                    <Transition fallback=|| view! { <p class="note">"Loading conversations…"</p> }>
                        {move || Suspend::new(async move {
                            match list.await {
                                Ok(view_) => {
                                    let s = state.get_untracked();
                                    view! { <Tabs state=s.clone() counts=view_.counts /> <ConversationList state=s rows=view_.rows more=view_.more now_ms=view_.now_ms /> }.erase()
                                }
                                Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                            }
                        })}
                    </Transition>
                </section>
                <section class="inbox-thread card" aria-labelledby="thread-title">
                    <Transition fallback=|| view! { <p class="note">"Loading the conversation…"</p> }>
                        {move || Suspend::new(async move {
                            let people = assignees.await.unwrap_or_default();
                            match thread.await {
                                Ok(Some(t)) => view! {
                                    <Thread state=state.get_untracked() thread=t people marks reply status assign tags call note />
                                }.erase(),
                                Ok(None) => view! {
                                    <h2 id="thread-title" class="visually-hidden">"Conversation"</h2>
                                    <p class="empty">"Choose a conversation to read and answer it."</p>
                                }.erase(),
                                Err(e) => view! {
                                    <h2 id="thread-title">"Conversation"</h2>
                                    <ErrorNote error=e.to_string() />
                                }.erase(),
                            }
                        })}
                    </Transition>
                </section>
            </div>
        </Guard>
    }
}

/// "Live", or "Reconnecting…" while the event stream is down. Nothing before
/// the page is hydrated: without JavaScript, the page is as fresh as its load.
#[component]
fn LiveState(connected: RwSignal<Option<bool>>) -> impl IntoView {
    move || {
        match connected.get() {
        Some(true) => view! { <p class="live-state ok" role="status">"Live"</p> }.erase(),
        Some(false) => view! {
            <p class="live-state warn" role="status">"Disconnected: reconnecting… New messages appear once the connection is back."</p>
        }
        .erase(),
        None => ().erase(),
    }
    }
}

#[component]
fn Tabs(state: InboxState, counts: [i64; 3]) -> impl IntoView {
    let mine_href = InboxState {
        mine: !state.mine,
        shown: INBOX_LIMIT,
        open: None,
        ..state.clone()
    }
    .href();
    view! {
        <nav class="tabs" aria-label="Status">
            {TABS.iter().zip(counts).map(|((value, label), count)| {
                let href = InboxState { status: value.to_string(), shown: INBOX_LIMIT, open: None, ..state.clone() }.href();
                let current = state.status == *value;
                view! {
                    <a href=href class="tab" aria-current=current.then_some("page")>
                        {*label} " " <span class="count" aria-label=format!("{count} conversations")>{count}</span>
                    </a>
                }
            }).collect_view()}
        </nav>
        <a class="toggle" href=mine_href>
            {if state.mine { "Showing mine · show all" } else { "Show only mine" }}
        </a>
    }
}

#[component]
fn ConversationList(state: InboxState, rows: Vec<InboxRow>, more: bool, now_ms: i64) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="empty">"No conversations here."</p> }.erase();
    }
    // One clock for every SLA countdown of the list, ticking only when one shows.
    let now = rows
        .iter()
        .any(|r| r.sla_due_ms.is_some())
        .then(|| ticking_clock(now_ms));
    // Older conversations extend the list rather than replace it, so that live
    // updates keep the whole list current.
    let older = (more && state.shown < INBOX_MOST_SHOWN).then(|| {
        let href = InboxState {
            shown: (state.shown + INBOX_LIMIT).min(INBOX_MOST_SHOWN),
            ..state.clone()
        }
        .href();
        view! { <p class="more"><a href=href>"Show older conversations"</a></p> }
    });
    view! {
        <ul class="conversations">
            {rows.into_iter().map(|row| {
                let open = state.open.as_deref() == Some(row.customer_id.as_str());
                let href = InboxState { open: Some(row.customer_id.clone()), ..state.clone() }.href();
                view! {
                    <li class:open=open>
                        <a href=href aria-current=open.then_some("true")>
                            <span class="who">{row.name}</span>
                            {(row.waiting > 0).then(|| view! {
                                <span class="badge unread" aria-label=format!("{} waiting", row.waiting)>{row.waiting}</span>
                            })}
                            <span class="preview">{row.last_text}</span>
                            <span class="meta">
                                <time>{row.last_active}</time>
                                {row.assignee.map(|a| view! { " · " {a} })}
                            </span>
                            {row.routed_by.map(|r| view! { <span class="routed-by">{format!("Rule: {r}")}</span> })}
                            {row.sla_due_ms.zip(now).map(|(due, now)| view! { <SlaCountdown due now /> })}
                        </a>
                    </li>
                }
            }).collect_view()}
        </ul>
        {older}
    }
    .erase()
}

#[component]
fn Thread(
    state: InboxState,
    thread: ThreadView,
    people: Assignees,
    marks: LiveMarks,
    reply: FormAction<InboxReply>,
    status: FormAction<InboxStatus>,
    assign: FormAction<InboxAssign>,
    tags: FormAction<InboxTags>,
    call: FormAction<InboxCall>,
    note: FormAction<InboxNote>,
) -> impl IntoView {
    let back = InboxState {
        open: None,
        ..state.clone()
    }
    .href();
    let id = StoredValue::new(thread.customer_id.clone());
    let problem = action_problem(reply.value());
    let form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(reply.value(), form);
    let me = format!("user:{}", people.me);
    let assigned_to_me = thread.assigned == me;
    #[cfg(feature = "hydrate")]
    presence::mark_read_while_shown(
        thread.customer_id.clone(),
        thread.messages.last().map(|m| (m.id.clone(), m.at_ms)),
        thread.agent_read_ms,
    );
    let typed = typing_signal(thread.customer_id.clone());
    let draft = Draft::new();
    Effect::new(move |_| {
        if matches!(reply.value().get(), Some(Ok(_))) {
            draft.clear();
        }
    });
    let seen_mark = thread.visitor_read_ms;
    view! {
        <a class="back" href=back>"← All conversations"</a>
        <header class="thread-head">
            <div>
                <h2 id="thread-title">{thread.name.clone()}</h2>
                {thread.email.clone().map(|e| view! { <p class="muted">{e}</p> })}
            </div>
            <span class=format!("badge status-{}", thread.status.to_lowercase())>{thread.status.clone()}</span>
        </header>
        {thread.csat.clone().map(|(rating, comment)| view! {
            <p class="csat-rating">
                <span class="stars" aria-hidden="true">{"★".repeat(rating as usize)}{"☆".repeat(5 - rating.clamp(0, 5) as usize)}</span>
                " "<strong>{format!("Rated {rating} of 5")}</strong>" by the visitor"
                {comment.map(|c| view! { <q>{c}</q> })}
            </p>
        })}
        <CustomerFacts thread=thread.clone() tags />
        <RoutingWhy latest=thread.routing.clone() history=thread.routing_history.clone() />
        <div class="thread-actions">
            {TABS.iter().filter(|(value, _)| *value != thread.status).map(|(value, label)| view! {
                <PostForm action=status>
                    <input type="hidden" name="customer_id" value=id.get_value() />
                    <input type="hidden" name="status" value=*value />
                    <button type="submit" class="button secondary">{format!("Mark {}", label.to_lowercase())}</button>
                </PostForm>
            }).collect_view()}
            {people.admin.then(|| view! {
                <a class="button secondary" href=format!("/inbox/{}/export", id.get_value()) download="" rel="external">"Export data"</a>
            })}
            <PostForm action=call>
                <input type="hidden" name="customer_id" value=id.get_value() />
                <button type="submit" class="button secondary" disabled=move || call.pending().get()>"Start a video call"</button>
            </PostForm>
            {(!assigned_to_me).then(|| view! {
                <PostForm action=assign>
                    <input type="hidden" name="customer_id" value=id.get_value() />
                    <input type="hidden" name="to" value=me.clone() />
                    <button type="submit" class="button secondary">"Assign to me"</button>
                </PostForm>
            })}
            <PostForm action=assign attr:class="assign">
                <input type="hidden" name="customer_id" value=id.get_value() />
                <label for="assign-to">"Assigned to"</label>
                <select id="assign-to" name="to">
                    <option value="" selected=thread.assigned.is_empty()>"Nobody"</option>
                    <optgroup label="Users">
                        {people.users.into_iter().map(|(uid, name)| {
                            let value = format!("user:{uid}");
                            let selected = value == thread.assigned;
                            view! { <option value=value selected=selected>{name}</option> }
                        }).collect_view()}
                    </optgroup>
                    <optgroup label="Teams">
                        {people.teams.into_iter().map(|(tid, name)| {
                            let value = format!("team:{tid}");
                            let selected = value == thread.assigned;
                            view! { <option value=value selected=selected>{name}</option> }
                        }).collect_view()}
                    </optgroup>
                </select>
                <button type="submit" class="button secondary">"Assign"</button>
            </PostForm>
        </div>
        <ActionError value=status.value() />
        <ActionError value=assign.value() />
        <ActionError value=call.value() />
        {move || call.value().get().and_then(Result::ok).map(|link| view! {
            <p class="note ok" role="status">
                "The call is open, and the customer has the invitation in the chat. "
                <a class="button primary small" href=link target="_blank" rel="noopener">"Join the call"</a>
            </p>
        })}
        <ol class="messages" aria-label="Messages">
            {(thread.earlier > 0).then(|| view! {
                <li class="note">{format!("{} earlier messages are not shown.", thread.earlier)}</li>
            })}
            {if thread.messages.is_empty() && thread.notes.is_empty() {
                view! { <li class="empty">"No messages yet."</li> }.erase()
            } else {
                // Each note goes before the first message written after it.
                let mut notes = thread.notes.into_iter().peekable();
                let messages = thread.messages.into_iter().map(|m| {
                    let before: Vec<_> = std::iter::from_fn(|| notes.next_if(|n| n.at_ms <= m.at_ms))
                        .map(|note| view! { <NoteItem note /> })
                        .collect();
                    let seen = (!m.inbound).then(|| view! {
                        <SeenMark marks customer_id=id.get_value() at_ms=m.at_ms stored=seen_mark />
                    }.erase());
                    view! { {before} <MessageItem message=m seen /> }
                }).collect_view();
                let after = notes.map(|note| view! { <NoteItem note /> }).collect_view();
                view! { {messages} {after} }.erase()
            }}
        </ol>
        <TypingNotes marks customer_id=id.get_value() />
        <PostForm action=reply node_ref=form attr:class="reply">
            <input type="hidden" name="customer_id" value=id.get_value() />
            <label for="reply-text">"Reply"</label>
            <textarea id="reply-text" name="message" rows="3" required=true maxlength="10000" node_ref=draft.field
                on:input=move |ev| {
                    let text = event_target_value(&ev);
                    typed(text.clone());
                    draft.typed(text);
                }
                on:keydown=move |ev| draft.key(ev)
                on:focus=move |_| draft.wanted.set(true)
                aria-invalid=field_invalid(problem, "message") aria-describedby="reply-text-error"></textarea>
            <FieldMessage problem field="message" id="reply-text-error" />
            <input type="hidden" name="text_block_id" prop:value=move || draft.block.get() />
            <button type="submit" class="button primary" disabled=move || reply.pending().get()>"Send"</button>
        </PostForm>
        <BlockPicker customer_id=id.get_value() draft />
        <NoteForm customer_id=id.get_value() action=note />
        <AttachForm customer_id=id.get_value() back=state.href() />
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_urls_keep_tab_filter_and_conversation() {
        let s = InboxState {
            status: "DONE".into(),
            mine: true,
            shown: INBOX_LIMIT,
            open: Some("a b".into()),
        };
        assert_eq!(s.href(), "/inbox?status=DONE&mine=1&c=a%20b");
        let longer = InboxState { shown: 200, ..s };
        assert_eq!(longer.href(), "/inbox?status=DONE&mine=1&shown=200&c=a%20b");
    }
}
