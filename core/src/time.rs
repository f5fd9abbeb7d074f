//! Storage times are unix milliseconds in UTC; these convert them.

use chrono::{DateTime, TimeZone, Utc};

/// Now, as stored.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// A stored time as a `DateTime`. Out-of-range values (never written by Rapport)
/// fall back to the epoch rather than panicking.
pub fn from_ms(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms).single().unwrap_or_default()
}

/// A duration in stored milliseconds (saturating: no wait Rapport keeps comes near).
pub fn duration_ms(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
