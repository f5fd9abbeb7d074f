//! The bounds a batch from the visitor script is checked against before
//! anything of it is stored: the endpoint is public, so every field of every
//! event is checked.

use super::{TrackBatch, TrackEvent};
use crate::{error::CoreResult, validate::Checks};

/// Most events in one batch.
pub const MAX_BATCH: usize = 100;
/// How far back an event may lie (the script sends within minutes; a tab that was
/// asleep may send a day late).
const MAX_AGE_MS: i64 = 7 * 86_400_000;
/// Clock skew allowed into the future.
const MAX_SKEW_MS: i64 = 5 * 60_000;
/// Longest stack trace kept, in characters.
pub(super) const MAX_STACK_CHARS: usize = 4000;
/// A visit or session lasts at most a day.
const MAX_DURATION_MS: i64 = 86_400_000;

/// The path of an http(s) URL (`/` when it has none), or `None` when it is not one.
pub(crate) fn url_path(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.path().to_string())
}

struct Check<'a> {
    checks: &'a mut Checks,
    prefix: String,
    now: i64,
}

impl Check<'_> {
    fn f(&self, name: &str) -> String {
        format!("{}.{name}", self.prefix)
    }
    fn id(&mut self, name: &str, value: &str) {
        let field = self.f(name);
        self.checks.required_text(&field, Some(value), 100);
    }
    fn opt(&mut self, name: &str, value: Option<&str>) {
        let field = self.f(name);
        self.checks.optional_text(&field, value, 200);
    }
    fn time(&mut self, name: &str, value: i64) {
        let field = self.f(name);
        if value < self.now - MAX_AGE_MS || value > self.now + MAX_SKEW_MS {
            self.checks
                .push(&field, "out_of_range", "must be unix ms within the last 7 days");
        }
    }
    fn url(&mut self, name: &str, value: &str) {
        let field = self.f(name);
        if value.len() > 2000 || url_path(value).is_none() {
            self.checks
                .push(&field, "invalid_url", "must be an absolute http(s) URL");
        }
    }
    fn range(&mut self, name: &str, value: i64, range: std::ops::RangeInclusive<i64>) {
        let field = self.f(name);
        self.checks.in_range(&field, value, range);
    }
    fn tags(&mut self, tags: &[String]) {
        let field = self.f("tags");
        self.checks.tags(&field, tags, 50);
    }
}

/// Checks a batch before anything of it is stored: every field of every event,
/// with `now` bounding its times.
pub(crate) fn validate(batch: &TrackBatch, now: i64) -> CoreResult<()> {
    let mut checks = Checks::new();
    if batch.events.is_empty() || batch.events.len() > MAX_BATCH {
        checks.push("events", "batch_size", format!("send 1 to {MAX_BATCH} events"));
        return checks.finish();
    }
    for (i, event) in batch.events.iter().enumerate() {
        let mut c = Check {
            checks: &mut checks,
            prefix: format!("events[{i}]"),
            now,
        };
        match event {
            TrackEvent::Visit(v) => {
                c.id("id", &v.id);
                c.id("visitorId", &v.visitor_id);
                c.opt("externalId", v.external_id.as_deref());
                c.url("url", &v.url);
                c.time("startedAt", v.started_at);
                c.range("durationMs", v.duration_ms, 0..=MAX_DURATION_MS);
                c.range("pageViews", v.page_views, 1..=10_000);
                c.tags(&v.tags);
            }
            TrackEvent::Session(s) => {
                c.id("id", &s.id);
                let reason_ok = !s.reason.is_empty()
                    && s.reason.len() <= 40
                    && s.reason
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
                if !reason_ok {
                    let field = c.f("reason");
                    c.checks.push(
                        &field,
                        "invalid_reason",
                        "an upper-case token of A-Z, 0-9 and _ (e.g. CHAT)",
                    );
                }
                c.time("startedAt", s.started_at);
                c.range("endedAt", s.ended_at - s.started_at, 0..=MAX_DURATION_MS);
                c.tags(&s.tags);
            }
            TrackEvent::Resource(r) => {
                c.id("id", &r.id);
                c.time("at", r.at);
                for (name, value) in [
                    ("visitId", &r.visit_id),
                    ("sessionId", &r.session_id),
                    ("visitorId", &r.visitor_id),
                    ("externalId", &r.external_id),
                ] {
                    c.opt(name, value.as_deref());
                }
                c.id("name", &r.name);
                c.id("resourceType", &r.kind);
                c.url("url", &r.url);
                c.range("statusCode", r.status_code.unwrap_or(0).into(), 0..=999);
                c.range("durationMs", r.duration_ms, 0..=3_600_000);
                c.range("transferBytes", r.transfer_bytes.unwrap_or(0), 0..=i64::from(i32::MAX));
                c.tags(&r.tags);
            }
            TrackEvent::ScriptError(e) => {
                c.id("id", &e.id);
                c.time("at", e.at);
                for (name, value) in [
                    ("visitId", &e.visit_id),
                    ("sessionId", &e.session_id),
                    ("visitorId", &e.visitor_id),
                    ("externalId", &e.external_id),
                    ("fileName", &e.file_name),
                ] {
                    c.opt(name, value.as_deref());
                }
                c.url("url", &e.url);
                if e.message.trim().is_empty() {
                    let field = c.f("message");
                    c.checks.push(&field, "required", "message is required");
                }
                c.range("line", e.line.unwrap_or(0).into(), 0..=10_000_000);
                c.range("column", e.column.unwrap_or(0).into(), 0..=10_000_000);
                c.tags(&e.tags);
            }
            TrackEvent::ActionRuleMatch(m) => {
                c.id("id", &m.id);
                c.id("ruleId", &m.rule_id);
                c.time("at", m.at);
                c.opt("visitorId", m.visitor_id.as_deref());
                c.url("url", &m.url);
            }
        }
    }
    checks.finish()
}

pub(super) fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}
