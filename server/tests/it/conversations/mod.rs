//! Conversations and messages end to end: the spec's status rules and the events
//! they fire (checked at a real receiver), per-type message rules and history,
//! concurrent status changes, and the visitor widget.

mod messages;
mod status_events;
mod widget;

use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);
