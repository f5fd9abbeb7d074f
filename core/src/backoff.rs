//! Retry schedules for background work that talks to other systems: webhook
//! deliveries and outgoing mail. Both keep the attempt count in the database,
//! so a schedule survives restarts; this type only says how long to wait.

use std::time::Duration;

/// The waits before the 2nd, 3rd, … attempt; once they are spent, the work
/// has failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff(Vec<Duration>);

impl Backoff {
    /// A schedule with these waits, in order.
    pub fn new(waits: Vec<Duration>) -> Self {
        Backoff(waits)
    }

    /// How long to wait after failed attempt `attempt` (counted from 1), or
    /// `None` when that was the last.
    pub fn after(&self, attempt: i64) -> Option<Duration> {
        usize::try_from(attempt - 1).ok().and_then(|i| self.0.get(i)).copied()
    }

    /// Every attempt the schedule allows, the first included.
    pub fn attempts(&self) -> usize {
        self.0.len() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_follow_the_failed_attempt_until_spent() {
        let s = Duration::from_secs;
        let backoff = Backoff::new(vec![s(5), s(60)]);
        assert_eq!(backoff.after(1), Some(s(5)));
        assert_eq!(backoff.after(2), Some(s(60)));
        assert_eq!(backoff.after(3), None);
        assert_eq!(backoff.after(0), None);
        assert_eq!(backoff.attempts(), 3);
    }
}
