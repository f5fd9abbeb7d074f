//! The inbox's routing and SLA parts: why a conversation came to the agent (the
//! decision that last routed it, and its routing history in a disclosure), and
//! each waiting conversation's SLA deadline, counting down live.
//!
//! A countdown renders first from the time the server read the list, so that the
//! server's page and the browser's first render agree; once the page is live one
//! shared clock ticks each second for every countdown of the list.

use leptos::prelude::*;

use crate::{api::routing_log::RoutingLine, erase::EraseView};

/// The current time in unix ms: the server's `server_now` until the page is live,
/// then the browser's, each second.
pub fn ticking_clock(server_now: i64) -> Signal<i64> {
    let now = RwSignal::new(server_now);
    #[cfg(feature = "hydrate")]
    {
        // The first tick comes after hydration, which must see the server's text.
        let tick = move || now.set(browser::now_ms());
        if let Ok(handle) = set_interval_with_handle(tick, std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    }
    now.into()
}

#[cfg(feature = "hydrate")]
mod browser {
    use wasm_bindgen::prelude::wasm_bindgen;

    #[wasm_bindgen]
    extern "C" {
        /// `Date.now()`.
        #[wasm_bindgen(js_namespace = Date, js_name = now)]
        fn date_now() -> f64;
    }

    /// The browser's time, unix ms.
    pub(super) fn now_ms() -> i64 {
        date_now() as i64
    }
}

/// `4 min 05 s`, `1 h 02 min`, `2 d 3 h`: a duration as a countdown shows it.
pub fn duration_words(ms: i64) -> String {
    let s = ms.abs() / 1000;
    let (d, h, m, sec) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60, s % 60);
    if d > 0 {
        format!("{d} d {h} h")
    } else if h > 0 {
        format!("{h} h {m:02} min")
    } else if m > 0 {
        format!("{m} min {sec:02} s")
    } else {
        format!("{sec} s")
    }
}

/// What a countdown says at `now` for a deadline `due` (unix ms), and whether
/// it has passed.
pub fn countdown(due: i64, now: i64) -> (String, bool) {
    if now > due {
        (format!("SLA overdue by {}", duration_words(now - due)), true)
    } else {
        (format!("SLA due in {}", duration_words(due - now)), false)
    }
}

/// A waiting conversation's SLA deadline, counting down; after it passes,
/// "overdue by …" in the warning style. The deadline itself is in the
/// `<time>`'s `datetime` and title.
#[component]
pub fn SlaCountdown(
    /// The deadline, unix ms.
    due: i64,
    /// The ticking clock ([`ticking_clock`]).
    now: Signal<i64>,
) -> impl IntoView {
    let at = chrono::DateTime::from_timestamp_millis(due).unwrap_or_default();
    let iso = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let title = format!("First answer due by {} UTC", at.format("%Y-%m-%d %H:%M:%S"));
    let state = Memo::new(move |_| countdown(due, now.get()));
    // role="timer": screen readers do not announce each tick.
    view! {
        <span class="sla" class:overdue=move || state.get().1 role="timer">
            <time datetime=iso title=title>{move || state.get().0}</time>
        </span>
    }
}

/// "Routed by rule … — reason — result" and the conversation's routing history.
/// Nothing for a conversation no rule ever looked at.
#[component]
pub fn RoutingWhy(
    /// The decision that last routed the conversation.
    latest: Option<RoutingLine>,
    /// Its decisions, newest first.
    history: Vec<RoutingLine>,
) -> impl IntoView {
    if latest.is_none() && history.is_empty() {
        return ().erase();
    }
    let count = history.len();
    view! {
        <div class="routing-why">
            {latest.map(|l| view! { <p class="routed">{l.summary()}</p> })}
            {(count > 0).then(|| view! {
                <details class="routing-history">
                    <summary>{format!("Routing history ({count})")}</summary>
                    <ol class="plain-list">
                        {history.into_iter().map(|l| view! { <HistoryEntry line=l /> }).collect_view()}
                    </ol>
                </details>
            })}
        </div>
    }
    .erase()
}

#[component]
fn HistoryEntry(line: RoutingLine) -> impl IntoView {
    let tried = (!line.tried.is_empty()).then(|| {
        let names: Vec<String> = line
            .tried
            .iter()
            .map(|(name, matched)| format!("{name} ({})", if *matched { "matched" } else { "no match" }))
            .collect();
        view! { <p class="muted small">{format!("Tried: {}", names.join(", "))}</p> }
    });
    let actions = (!line.actions.is_empty()).then(|| {
        view! {
            <ul class="actions-taken">
                {line.actions.iter().map(|a| view! { <li>{a.clone()}</li> }).collect_view()}
            </ul>
        }
    });
    view! {
        <li>
            <p><time>{line.at.clone()}</time> " — " {line.summary()}</p>
            {tried}
            {actions}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdowns_read_in_the_largest_units_and_turn_overdue() {
        assert_eq!(countdown(65_000, 0), ("SLA due in 1 min 05 s".into(), false));
        assert_eq!(countdown(0, 0), ("SLA due in 0 s".into(), false));
        assert_eq!(countdown(0, 3_000), ("SLA overdue by 3 s".into(), true));
        assert_eq!(duration_words(3_720_000), "1 h 02 min");
        assert_eq!(duration_words(2 * 86_400_000 + 3 * 3_600_000 + 59_000), "2 d 3 h");
    }
}
