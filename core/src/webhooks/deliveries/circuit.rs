//! An endpoint's circuit: whether it is held, and when it is tried again.

use super::*;
use crate::ids::TenantId;

/// An endpoint's circuit, stored on `webhook_endpoints`.
///
/// Closed (`failures` 0), every due delivery may go. A failed attempt opens it:
/// the endpoint is held as a whole until `next_attempt_at`, whatever its backlog,
/// by the retry schedule's wait for its `failures`-th failure in a row (or a longer
/// `Retry-After`). Once that passes it is half-open: one delivery is claimed as a
/// probe, and the endpoint is held while the probe is under way. A success closes
/// the circuit; a failure opens it again for the next wait. Attempts that were
/// already under way when the circuit opened do not count again (each failing
/// attempt of a burst would otherwise jump the schedule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Circuit {
    /// Failed attempts since the last success; 0 while the endpoint works.
    pub failures: i64,
    /// No attempt before this, unix ms.
    pub next_attempt_at: i64,
    /// When the last counted failure was recorded, unix ms.
    pub last_failure_at: Option<i64>,
    /// When the first failed attempt since the last success started, unix ms.
    pub failing_since: Option<i64>,
}

impl Circuit {
    /// Moves the circuit by one attempt that started at `started_at` and whose
    /// outcome is recorded at `now`.
    pub fn record(&mut self, started_at: i64, outcome: &Outcome, policy: &RetryPolicy, now: i64) {
        match outcome {
            Outcome::Delivered => {
                *self = Circuit {
                    failures: 0,
                    next_attempt_at: self.next_attempt_at.min(now),
                    last_failure_at: None,
                    failing_since: None,
                };
            }
            Outcome::Failed { retry_after } => {
                self.failing_since = Some(self.failing_since.unwrap_or(started_at).min(started_at));
                let asked = duration_ms(policy.asked(*retry_after));
                let fresh = self.failures == 0 || self.last_failure_at.is_none_or(|at| started_at >= at);
                if fresh {
                    self.failures += 1;
                    self.last_failure_at = Some(now);
                    // Replaces the probe's hold: the wait starts now.
                    self.next_attempt_at = now + duration_ms(policy.hold(self.failures)).max(asked);
                } else {
                    self.next_attempt_at = self.next_attempt_at.max(now + asked);
                }
            }
            // The endpoint is disabled; its circuit no longer matters.
            Outcome::Gone => {}
        }
    }

    /// How long every attempt has failed, ms; `i64::MIN` while the endpoint works.
    pub fn failing_for(&self, now: i64) -> i64 {
        self.failing_since.map_or(i64::MIN, |since| now - since)
    }
}

/// An endpoint's circuit as stored, with the endpoint it belongs to.
#[derive(sqlx::FromRow)]
pub(super) struct CircuitRow {
    pub(super) id: WebhookId,
    pub(super) tenant_id: TenantId,
    failures: i64,
    next_attempt_at: i64,
    last_failure_at: Option<i64>,
    failing_since: Option<i64>,
}

impl CircuitRow {
    pub(super) fn circuit(&self) -> Circuit {
        Circuit {
            failures: self.failures,
            next_attempt_at: self.next_attempt_at,
            last_failure_at: self.last_failure_at,
            failing_since: self.failing_since,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        let s = Duration::from_secs;
        RetryPolicy {
            schedule: Backoff::new(vec![s(5), s(60), s(600)]),
            disable_after: s(3600),
            max_retry_after: s(1800),
        }
    }

    const CLOSED: Circuit = Circuit {
        failures: 0,
        next_attempt_at: 0,
        last_failure_at: None,
        failing_since: None,
    };
    const FAILED: Outcome = Outcome::Failed { retry_after: None };

    #[test]
    fn the_hold_follows_the_schedule_and_then_keeps_its_last_wait() {
        let p = policy();
        let s = Duration::from_secs;
        assert_eq!(p.hold(1), s(5));
        assert_eq!(p.hold(3), s(600));
        assert_eq!(p.hold(4), s(600));
        assert_eq!(p.hold(40), s(600));
        assert_eq!(p.asked(Some(s(7200))), s(1800), "Retry-After is capped");
        assert_eq!(p.asked(None), s(0));
    }

    #[test]
    fn a_failure_holds_the_endpoint_and_a_burst_counts_once() {
        let p = policy();
        let mut c = CLOSED;
        // Three attempts were under way; the first failure opens the circuit.
        c.record(1_000, &FAILED, &p, 2_000);
        assert_eq!((c.failures, c.next_attempt_at), (1, 7_000));
        assert_eq!(c.failing_since, Some(1_000));
        // The others started before it opened: no second step up the schedule.
        c.record(1_100, &FAILED, &p, 2_100);
        c.record(900, &FAILED, &p, 2_200);
        assert_eq!((c.failures, c.next_attempt_at), (1, 7_000));
        assert_eq!(c.failing_since, Some(900));
        // The probe after the hold fails: the next, longer wait.
        c.record(7_000, &FAILED, &p, 7_500);
        assert_eq!((c.failures, c.next_attempt_at), (2, 67_500));
        assert_eq!(c.failing_for(67_500), 66_600);
    }

    #[test]
    fn retry_after_lengthens_the_hold_even_from_a_stale_attempt() {
        let p = policy();
        let mut c = CLOSED;
        let asked = Outcome::Failed {
            retry_after: Some(Duration::from_secs(120)),
        };
        c.record(1_000, &asked, &p, 2_000);
        assert_eq!((c.failures, c.next_attempt_at), (1, 122_000));
        c.record(1_500, &asked, &p, 3_000);
        assert_eq!((c.failures, c.next_attempt_at), (1, 123_000));
    }

    #[test]
    fn a_success_closes_the_circuit() {
        let p = policy();
        let mut c = CLOSED;
        c.record(1_000, &FAILED, &p, 2_000);
        // A probe was claimed at the reopening: the endpoint is held for its lease.
        c.next_attempt_at = 67_000;
        c.record(7_000, &Outcome::Delivered, &p, 7_300);
        assert_eq!(
            c,
            Circuit {
                failures: 0,
                next_attempt_at: 7_300,
                last_failure_at: None,
                failing_since: None,
            }
        );
        assert_eq!(c.failing_for(9_000), i64::MIN);
        // After a success, a failure counts from the start again.
        c.record(8_000, &FAILED, &p, 8_100);
        assert_eq!((c.failures, c.next_attempt_at), (1, 13_100));
    }
}
