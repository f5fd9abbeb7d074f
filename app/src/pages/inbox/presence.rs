//! What the inbox hears of the open conversation beyond what is stored: who
//! is typing (the visitor, with their draft where the workspace shows drafts;
//! another agent, by name), and how far the visitor has read. The page's event
//! stream (`GET /inbox/events`, see [`super`]) feeds [`LiveMarks`];
//! the composer tells the visitor this agent is typing ([`typing_signal`]),
//! and a thread on screen marks the conversation read (`mark_read_while_shown`).
//!
//! Typing is never stored: a note is forgotten [`TYPING_SHOWN_MS`] after the
//! last signal, or at once when the typist stops or sends.

use leptos::prelude::*;

use crate::erase::EraseView;

/// How long a typing note stays without another signal, in ms: senders repeat
/// theirs every 1.5–2 s while typing goes on.
// The stream, and so what it feeds, runs in the browser only.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub const TYPING_SHOWN_MS: u64 = 6_000;
/// How often the composer repeats "typing", in ms.
const TYPING_EVERY_MS: u64 = 2_000;

/// One side typing in one conversation: the customer, and the draft (the
/// visitor's) or the name (an agent's).
type Typing = Option<(String, Option<String>)>;

/// The live state of conversations that the event stream brings.
#[derive(Debug, Clone, Copy)]
pub struct LiveMarks {
    visitor_typing: RwSignal<Typing>,
    agent_typing: RwSignal<Typing>,
    /// The visitor's read mark heard since the thread was read: customer, ms.
    visitor_seen: RwSignal<Option<(String, i64)>>,
    /// Bumped by each typing signal, so that only the last one's timer clears.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    heard: StoredValue<(u32, u32)>,
}

impl Default for LiveMarks {
    fn default() -> Self {
        LiveMarks {
            visitor_typing: RwSignal::new(None),
            agent_typing: RwSignal::new(None),
            visitor_seen: RwSignal::new(None),
            heard: StoredValue::new((0, 0)),
        }
    }
}

#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
impl LiveMarks {
    /// A `typing` event: shows the note, and forgets it when the typist stops
    /// or falls silent.
    pub fn heard_typing(&self, customer_id: String, by_visitor: bool, text: Option<String>, active: bool) {
        let (slot, heard) = (
            if by_visitor {
                self.visitor_typing
            } else {
                self.agent_typing
            },
            self.heard,
        );
        let bump = |(v, a): (u32, u32)| {
            if by_visitor {
                (v.wrapping_add(1), a)
            } else {
                (v, a.wrapping_add(1))
            }
        };
        heard.update_value(|h| *h = bump(*h));
        let now = heard.get_value();
        if !active {
            slot.set(None);
            return;
        }
        slot.set(Some((customer_id, text)));
        set_timeout(
            move || {
                if heard.get_value() == now {
                    slot.set(None);
                }
            },
            std::time::Duration::from_millis(TYPING_SHOWN_MS),
        );
    }

    /// A `read` event of the visitor.
    pub fn heard_visitor_read(&self, customer_id: String, up_to_ms: i64) {
        self.visitor_seen.set(Some((customer_id, up_to_ms)));
    }

    /// A message arrived from `by_visitor`'s side: its typing is over.
    pub fn heard_message(&self, customer_id: &str) {
        for slot in [self.visitor_typing, self.agent_typing] {
            if slot.with_untracked(|t| t.as_ref().is_some_and(|(c, _)| c == customer_id)) {
                slot.set(None);
            }
        }
    }
}

/// "The visitor is typing: “…”" and "Ada is typing…" under the open thread.
#[component]
pub fn TypingNotes(marks: LiveMarks, customer_id: String) -> impl IntoView {
    let customer = StoredValue::new(customer_id);
    let of = move |slot: RwSignal<Typing>| {
        slot.get()
            .filter(|(c, _)| customer.with_value(|id| c == id))
            .map(|(_, text)| text)
    };
    view! {
        <div class="typing-notes" role="status" aria-live="polite">
            {move || of(marks.visitor_typing).map(|draft| match draft {
                Some(draft) => view! {
                    <p class="typing visitor">"The visitor is typing: " <q class="draft">{draft}</q></p>
                }.erase(),
                None => view! { <p class="typing visitor">"The visitor is typing…"</p> }.erase(),
            })}
            {move || of(marks.agent_typing).map(|name| view! {
                <p class="typing agent">{format!("{} is typing…", name.unwrap_or_else(|| "Someone".into()))}</p>
            })}
        </div>
    }
}

/// "Seen" on an agent's message the visitor has seen: created at or before
/// their read mark (`stored`, as the thread was read, or newer, as heard).
#[component]
pub fn SeenMark(marks: LiveMarks, customer_id: String, at_ms: i64, stored: Option<i64>) -> impl IntoView {
    let seen = move || {
        let heard = marks
            .visitor_seen
            .with(|s| s.as_ref().filter(|(c, _)| *c == customer_id).map(|(_, at)| *at));
        heard.max(stored).is_some_and(|mark| at_ms <= mark)
    };
    move || seen().then(|| view! { <span class="seen" title="The visitor has seen this message">" · Seen"</span> })
}

/// The composer's input handler: tells the visitor this agent is typing, at
/// most every [`TYPING_EVERY_MS`], and that they stopped when the reply is
/// emptied. Sending needs no stop: the visitor's chat ends the note when the
/// message arrives.
pub fn typing_signal(customer_id: String) -> impl Fn(String) + Clone + 'static {
    let resting = StoredValue::new(true);
    let customer = StoredValue::new(customer_id);
    move |text: String| {
        let typing = !text.trim().is_empty();
        if typing && !resting.get_value() {
            return;
        }
        resting.set_value(!typing);
        let customer_id = customer.get_value();
        leptos::task::spawn_local(async move {
            // A lost signal only delays a note that the next one brings.
            let _ = crate::api::inbox::inbox_typing(customer_id, typing).await;
        });
        if typing {
            set_timeout(
                move || resting.set_value(true),
                std::time::Duration::from_millis(TYPING_EVERY_MS),
            );
        }
    }
}

/// Marks the conversation read up to its newest message (`newest`: id and
/// time) once the agent has it on screen: at once if the page is shown, else
/// when it is shown again. Nothing when the mark is there already.
#[cfg(feature = "hydrate")]
pub fn mark_read_while_shown(customer_id: String, newest: Option<(String, i64)>, read_ms: Option<i64>) {
    use wasm_bindgen::{closure::Closure, JsCast};

    let Some((message_id, at)) = newest else { return };
    if read_ms.is_some_and(|mark| at <= mark) {
        return;
    }
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let mark = move || {
        let (customer_id, message_id) = (customer_id.clone(), message_id.clone());
        leptos::task::spawn_local(async move {
            let _ = crate::api::inbox::inbox_read(customer_id, message_id).await;
        });
    };
    if document.visibility_state() == web_sys::VisibilityState::Visible {
        mark();
        return;
    }
    let watched = document.clone();
    let once = std::rc::Rc::new(std::cell::Cell::new(false));
    let on_shown = Closure::<dyn FnMut()>::new(move || {
        if !once.get() && watched.visibility_state() == web_sys::VisibilityState::Visible {
            once.set(true);
            mark();
        }
    });
    let _ = document.add_event_listener_with_callback("visibilitychange", on_shown.as_ref().unchecked_ref());
    // Lives as long as the page: it acts once.
    on_shown.forget();
}
