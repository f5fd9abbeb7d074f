//! The engines: routing rules, SLA clocks, watchdogs and opening hours, acting on
//! live traffic.
//!
//! Each engine has a pure part, which decides over a snapshot and is table-tested
//! without a database, and a thin part that reads the snapshot and applies the
//! decision in the transaction of the event that caused it:
//! - [`hours`]: when opening hours are open, and deadlines that count open time only;
//! - [`routing`]: which rule matches and what its actions are (pure);
//! - [`balance`]: which agent of a queue's target takes a conversation (pure);
//! - [`snapshot`]: what the engines read before they decide;
//! - [`dispatch`]: routing on live traffic and the routing timers;
//! - [`reason`]: why a conversation is routed, as the log and the queue keep it;
//! - [`queue`]: conversations waiting for an agent, offered again as room frees;
//! - [`calls`]: video calls asked for from the chat, routed by the rules for `CALL`;
//! - [`outbound`]: system messages in the customer's language;
//! - [`log`]: the match log of routing decisions;
//! - [`sla`]: SLA clocks on business hours;
//! - [`alerts`]: delivering an alert to watchdog receivers (e-mail, dashboard, webhook);
//! - [`watchdogs`]: firing watchdogs on events, grouped per window.
//!
//! Timers (`NO_ANSWER`, queue waits, SLA deadlines, watchdog windows) are durable
//! jobs ([`crate::jobs`]); `usecases::jobs` runs the ones due.

pub mod alerts;
pub mod balance;
pub mod calls;
pub mod dispatch;
pub mod log;
pub mod outbound;
pub mod queue;
pub mod reason;
pub mod routing;
pub mod sla;
pub mod snapshot;
pub mod watchdogs;
