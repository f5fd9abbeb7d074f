//! The engines: routing rules, SLA clocks, watchdogs and opening hours, acting on
//! live traffic.
//!
//! Each engine has a pure part, which decides over a snapshot and is table-tested
//! without a database, and a thin part that reads the snapshot and applies the
//! decision in the transaction of the event that caused it:
//! - [`hours`]: when opening hours are open, and deadlines that count open time only;
//! - [`routing`]: which rule matches and what its actions are (pure);
//! - [`balance`]: which agent of a queue's target takes a conversation (pure);
//! - [`alerts`]: delivering an alert to watchdog receivers (e-mail, dashboard, webhook);
//! - [`watchdogs`]: firing watchdogs on events, grouped per window.
//!
//! Timers (`NO_ANSWER`, queue waits, SLA deadlines, watchdog windows) are durable
//! jobs ([`crate::jobs`]); [`Services::run_engine_job`] runs the ones due.

pub mod alerts;
pub mod balance;
pub mod hours;
pub mod routing;
pub mod watchdogs;

use crate::{
    error::{CoreError, CoreResult},
    jobs::Job,
    Services,
};

impl Services {
    /// Runs a due engine job (called by the job runner).
    pub async fn run_engine_job(&self, job: &Job) -> CoreResult<()> {
        match job.kind.as_str() {
            other => Err(CoreError::Internal(format!("no engine handles jobs of kind {other}"))),
        }
    }
}
