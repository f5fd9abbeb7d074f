//! The browser's side of `GET /inbox/events`.

use leptos::prelude::*;
use wasm_bindgen::{closure::Closure, JsCast};

use super::{presence::LiveMarks, InboxState};

/// What the stream's callbacks update.
#[derive(Clone, Copy)]
struct Targets {
    state: Memo<InboxState>,
    marks: LiveMarks,
    list_tick: RwSignal<u32>,
    thread_tick: RwSignal<u32>,
    connected: RwSignal<Option<bool>>,
    /// The open stream, closed when the page goes.
    current: StoredValue<Option<web_sys::EventSource>, LocalStorage>,
    /// Whether the page is still shown (no reconnecting after it went).
    shown: StoredValue<bool>,
}

/// Opens the event stream for as long as the page is shown.
pub(super) fn follow(
    state: Memo<InboxState>,
    list_tick: RwSignal<u32>,
    thread_tick: RwSignal<u32>,
    connected: RwSignal<Option<bool>>,
    marks: LiveMarks,
) {
    let targets = Targets {
        state,
        marks,
        list_tick,
        thread_tick,
        connected,
        current: StoredValue::new_local(None),
        shown: StoredValue::new(true),
    };
    connect(targets);
    on_cleanup(move || {
        targets.shown.set_value(false);
        targets.current.with_value(|s| {
            if let Some(s) = s {
                s.close();
            }
        });
    });
}

/// The browser reconnects by itself after a network error; after an error
/// answer (a proxy's 502 while the server restarts) it gives up, so then
/// this opens a new stream a few seconds later.
fn connect(t: Targets) {
    let Ok(source) = web_sys::EventSource::new("/inbox/events") else {
        t.connected.set(Some(false));
        return;
    };
    let reload_all = move || {
        t.list_tick.update(|n| *n = n.wrapping_add(1));
        t.thread_tick.update(|n| *n = n.wrapping_add(1));
    };
    let on_open = Closure::<dyn FnMut()>::new(move || {
        // Back after an outage: events in between are lost, so read again.
        if t.connected.get_untracked() == Some(false) {
            reload_all();
        }
        t.connected.set(Some(true));
    });
    let failed = source.clone();
    let on_error = Closure::<dyn FnMut()>::new(move || {
        t.connected.set(Some(false));
        if failed.ready_state() == web_sys::EventSource::CLOSED && t.shown.get_value() {
            set_timeout(move || connect(t), std::time::Duration::from_secs(5));
        }
    });
    let on_event = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
        if ev.type_() == "resync" {
            reload_all();
            return;
        }
        let data = ev.data().as_string().unwrap_or_default();
        let data = serde_json::from_str::<serde_json::Value>(&data).unwrap_or_default();
        let customer = data.get("customerId").and_then(|c| c.as_str()).map(str::to_string);
        // Typing and read marks change no list: they go to the thread's notes.
        let text = |key: &str| data.get(key).and_then(|v| v.as_str()).map(str::to_string);
        let by_visitor = text("by").as_deref() == Some("VISITOR");
        match (ev.type_().as_str(), customer.clone()) {
            ("typing", Some(c)) => {
                let active = data.get("typing").and_then(|v| v.as_bool()).unwrap_or(false);
                let shown = if by_visitor { text("draft") } else { text("name") };
                return t.marks.heard_typing(c, by_visitor, shown, active);
            }
            ("read", Some(c)) => {
                if let (true, Some(at)) = (by_visitor, data.get("upTo").and_then(|v| v.as_i64())) {
                    t.marks.heard_visitor_read(c, at);
                }
                return;
            }
            ("message", Some(c)) => t.marks.heard_message(&c),
            _ => {}
        }
        t.list_tick.update(|n| *n = n.wrapping_add(1));
        if customer.is_some() && customer == t.state.get_untracked().open {
            t.thread_tick.update(|n| *n = n.wrapping_add(1));
        }
    });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    for name in [
        "message",
        "note",
        "conversation",
        "assigned",
        "resync",
        "typing",
        "read",
    ] {
        let _ = source.add_event_listener_with_callback(name, on_event.as_ref().unchecked_ref());
    }
    // The closures live as long as the source; once it is closed they are
    // never called again.
    on_open.forget();
    on_error.forget();
    on_event.forget();
    t.current.set_value(Some(source));
}
