//! What the visitor script reports: visits, recorded sessions with their reason,
//! page resources, script errors and the action rules that matched. The endpoint is public (authenticated by the
//! tenant's widget key), so every batch is bounded, every field checked, and every
//! event carries a client id: a retried batch is recorded once.

use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use super::{
    catalogue::{ACTION_RULE_MATCH, SESSION},
    days::{day_start, rollup_zone},
    errors::mark_error_day,
    facts::{add_rollup, hour_of, record, tags_column, Fact},
    visitors::mark_visitor_day,
};
use crate::{config::rules::action::ActionRule, error::CoreResult, ids::TenantId, validate::Checks, with_tx};

/// Most events in one batch.
pub const MAX_BATCH: usize = 100;
/// How far back an event may lie (the script sends within minutes; a tab that was
/// asleep may send a day late).
const MAX_AGE_MS: i64 = 7 * 86_400_000;
/// Clock skew allowed into the future.
const MAX_SKEW_MS: i64 = 5 * 60_000;
/// Longest stack trace kept, in characters.
const MAX_STACK_CHARS: usize = 4000;
/// A visit or session lasts at most a day.
const MAX_DURATION_MS: i64 = 86_400_000;

/// A batch from the visitor script.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TrackBatch {
    /// 1–100 events.
    #[serde(default)]
    #[schema(required = true, min_items = 1, max_items = 100)]
    pub events: Vec<TrackEvent>,
}

/// One reported event; `type` says which.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TrackEvent {
    /// A finished visit.
    Visit(VisitIn),
    /// A finished recorded session.
    Session(SessionIn),
    /// A page resource that loaded (or failed).
    Resource(ResourceIn),
    /// A script error.
    ScriptError(ScriptErrorIn),
    /// An action rule matched in the visitor's browser.
    ActionRuleMatch(ActionRuleMatchIn),
}

/// An action rule that matched in the visitor's browser (the script evaluates
/// them; `GET /widget/rules`). Counted as the rule report's
/// `ACTION_RULE_MATCH_COUNT`, by rule.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionRuleMatchIn {
    /// The event's id (1–100 characters).
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub id: String,
    /// The action rule's id. A rule the workspace no longer has (deleted while
    /// the script kept its copy) is skipped, and counted in `ignored`.
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub rule_id: String,
    /// When it matched, unix ms, within the last 7 days (and at most 5 minutes ahead).
    pub at: i64,
    /// The visitor.
    #[schema(max_length = 200)]
    pub visitor_id: Option<String>,
    /// The page, an http(s) URL.
    #[schema(format = "uri", max_length = 2000)]
    pub url: String,
}

/// A finished visit.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VisitIn {
    /// The visit's id (the script's), 1–100 characters.
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub id: String,
    /// The visitor's id (1–100 characters).
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub visitor_id: String,
    /// The id set through the client script API.
    #[schema(max_length = 200)]
    pub external_id: Option<String>,
    /// The entry page, an http(s) URL.
    #[schema(format = "uri", max_length = 2000)]
    pub url: String,
    /// Start, unix ms, within the last 7 days (and at most 5 minutes ahead).
    pub started_at: i64,
    /// Length, ms (at most a day).
    #[schema(minimum = 0, maximum = 86400000)]
    pub duration_ms: i64,
    /// Pages seen (1–10000).
    #[schema(minimum = 1, maximum = 10000)]
    pub page_views: i64,
    /// Tags (at most 50, each 1–64 characters).
    #[serde(default)]
    #[schema(value_type = Vec<crate::validate::Tag>, max_items = 50)]
    pub tags: Vec<String>,
}

/// A finished recorded session.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionIn {
    /// The session's id (1–100 characters).
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub id: String,
    /// Why it was recorded: an upper-case token such as `CHAT`, `COBROWSE`,
    /// `ERROR`, `RULE` or `MANUAL`.
    #[schema(pattern = "^[A-Z0-9_]{1,40}$", example = "CHAT")]
    pub reason: String,
    /// Start, unix ms, within the last 7 days (and at most 5 minutes ahead).
    pub started_at: i64,
    /// End, unix ms: not before the start, at most a day after it.
    pub ended_at: i64,
    /// Tags (at most 50, each 1–64 characters).
    #[serde(default)]
    #[schema(value_type = Vec<crate::validate::Tag>, max_items = 50)]
    pub tags: Vec<String>,
}

/// A page resource load.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceIn {
    /// The event's id (1–100 characters).
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub id: String,
    /// When it loaded, unix ms, within the last 7 days (and at most 5 minutes ahead).
    pub at: i64,
    /// The visit.
    #[schema(max_length = 200)]
    pub visit_id: Option<String>,
    /// The recorded session.
    #[schema(max_length = 200)]
    pub session_id: Option<String>,
    /// The visitor.
    #[schema(max_length = 200)]
    pub visitor_id: Option<String>,
    /// The id set through the client script API.
    #[schema(max_length = 200)]
    pub external_id: Option<String>,
    /// Resource name (usually the file name; 1–100 characters).
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub name: String,
    /// `script`, `css`, `img`, `font`, `fetch`, `xhr`, `document`, `other`, …
    #[serde(rename = "resourceType")]
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub kind: String,
    /// The page it loaded on, an http(s) URL.
    #[schema(format = "uri", max_length = 2000)]
    pub url: String,
    /// HTTP status, if known (0–999).
    #[schema(minimum = 0, maximum = 999)]
    pub status_code: Option<i32>,
    /// Load time, ms (at most an hour).
    #[schema(minimum = 0, maximum = 3600000)]
    pub duration_ms: i64,
    /// Bytes transferred, if known.
    #[schema(minimum = 0, maximum = 2147483647)]
    pub transfer_bytes: Option<i64>,
    /// Tags of the visit (at most 50, each 1–64 characters).
    #[serde(default)]
    #[schema(value_type = Vec<crate::validate::Tag>, max_items = 50)]
    pub tags: Vec<String>,
}

/// A script error.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScriptErrorIn {
    /// The event's id (1–100 characters).
    #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
    pub id: String,
    /// When it happened, unix ms, within the last 7 days (and at most 5 minutes ahead).
    pub at: i64,
    /// The visit.
    #[schema(max_length = 200)]
    pub visit_id: Option<String>,
    /// The recorded session.
    #[schema(max_length = 200)]
    pub session_id: Option<String>,
    /// The visitor.
    #[schema(max_length = 200)]
    pub visitor_id: Option<String>,
    /// The id set through the client script API.
    #[schema(max_length = 200)]
    pub external_id: Option<String>,
    /// The page, an http(s) URL.
    #[schema(format = "uri", max_length = 2000)]
    pub url: String,
    /// The error message (not blank; cut to 1000 characters).
    #[schema(pattern = r"\S")]
    pub message: String,
    /// The script file.
    #[schema(max_length = 200)]
    pub file_name: Option<String>,
    /// Line.
    #[schema(minimum = 0, maximum = 10000000)]
    pub line: Option<i32>,
    /// Column.
    #[schema(minimum = 0, maximum = 10000000)]
    pub column: Option<i32>,
    /// The stack trace, as the browser gave it (cut to 4000 characters). The
    /// script-error report shows one per error.
    pub stack: Option<String>,
    /// Tags of the visit (at most 50, each 1–64 characters).
    #[serde(default)]
    #[schema(value_type = Vec<crate::validate::Tag>, max_items = 50)]
    pub tags: Vec<String>,
}

/// What a batch did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TrackResult {
    /// Events recorded now.
    pub accepted: usize,
    /// Events recorded before (same id), skipped.
    pub duplicates: usize,
    /// Events about something the workspace no longer has (an action rule
    /// deleted since the script read it), skipped.
    pub ignored: usize,
}

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

fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// Stores a checked batch from the visitor script in `tx`: what it counted,
/// and the script errors that are new (the `JAVASCRIPT_ERROR` watchdogs'
/// business, `usecases::tracking`).
pub(crate) async fn store_batch<'b>(
    tx: &mut crate::db::Tx,
    tenant_id: &TenantId,
    batch: &'b TrackBatch,
) -> CoreResult<(TrackResult, Vec<&'b ScriptErrorIn>)> {
    let mut result = TrackResult::default();
    let zone = rollup_zone(tx, tenant_id).await?;
    // New script errors: the caller fires the JAVASCRIPT_ERROR watchdogs, once per batch.
    let mut new_errors: Vec<&ScriptErrorIn> = Vec::new();
    // The tenant's action rules, read once and only for a batch that reports matches.
    let mut action_rules: Option<std::collections::HashSet<String>> = None;
    for event in &batch.events {
        let inserted = match event {
            TrackEvent::ActionRuleMatch(m) => {
                if action_rules.is_none() {
                    let rules = crate::Services::config_all_in::<ActionRule>(tx, tenant_id).await?;
                    action_rules = Some(rules.into_iter().filter_map(|r| r.meta.id).collect());
                }
                if !action_rules.as_ref().is_some_and(|ids| ids.contains(&m.rule_id)) {
                    result.ignored += 1;
                    continue;
                }
                let fact = Fact {
                    kind: ACTION_RULE_MATCH,
                    at: m.at,
                    value: 1,
                    dim: Some(&m.rule_id),
                    subject: m.visitor_id.as_deref(),
                    dedupe: Some(&m.id),
                    ..Fact::default()
                };
                record(tx, tenant_id, &fact).await?
            }
            TrackEvent::Visit(v) => store_visit(tx, tenant_id, zone, v).await?,
            TrackEvent::Session(s) => {
                let fact = Fact {
                    kind: SESSION,
                    at: s.started_at,
                    value: s.ended_at - s.started_at,
                    dim: Some(&s.reason),
                    subject: Some(&s.id),
                    tags: &s.tags,
                    dedupe: Some(&s.id),
                    ..Fact::default()
                };
                record(tx, tenant_id, &fact).await?
            }
            TrackEvent::Resource(r) => store_resource(tx, tenant_id, zone, r).await?,
            TrackEvent::ScriptError(e) => {
                let stored = store_script_error(tx, tenant_id, zone, e).await?;
                if stored {
                    new_errors.push(e);
                }
                stored
            }
        };
        if inserted {
            result.accepted += 1;
        } else {
            result.duplicates += 1;
        }
    }
    Ok((result, new_errors))
}

/// Stores a visit with its rollups: `VISIT` (duration, by entry path and visitor),
/// `PAGE_VIEW` (pages, by entry path), and the visitor's day, with the day rows
/// in `zone` (the tenant's day-rollup zone).
pub(crate) async fn store_visit(
    tx: &mut crate::db::Tx,
    tenant_id: &TenantId,
    zone: Tz,
    v: &VisitIn,
) -> CoreResult<bool> {
    let path = url_path(&v.url).unwrap_or_else(|| "/".into());
    let inserted = with_tx!(tx, |conn| {
        sqlx::query(
        "insert into visits (tenant_id, id, visitor_id, external_id, url, path, started_at, duration_ms, page_views, tags) \
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) on conflict (tenant_id, id) do nothing"
    )
    .bind(tenant_id)
    .bind(&v.id)
    .bind(&v.visitor_id)
    .bind(&v.external_id)
    .bind(&v.url)
    .bind(&path)
    .bind(v.started_at)
    .bind(v.duration_ms)
    .bind(v.page_views)
    .bind(tags_column(&v.tags))
    .execute(conn)
    .await
    .map(|r| r.rows_affected())
    })?;
    if inserted == 0 {
        return Ok(false);
    }
    let at = v.started_at;
    add_rollup(
        tx,
        tenant_id,
        zone,
        "VISIT",
        at,
        v.duration_ms,
        1,
        &[("DIM", &path), ("VISITOR", &v.visitor_id)],
    );
    add_rollup(tx, tenant_id, zone, "PAGE_VIEW", at, v.page_views, 1, &[("DIM", &path)]);
    mark_visitor_day(tx, tenant_id, zone, &v.visitor_id, v.started_at).await?;
    Ok(true)
}

/// Stores a page resource load with its hourly and daily rollups (the day rows
/// in `zone`, the tenant's day-rollup zone).
pub(crate) async fn store_resource(
    tx: &mut crate::db::Tx,
    tenant_id: &TenantId,
    zone: Tz,
    r: &ResourceIn,
) -> CoreResult<bool> {
    let path = url_path(&r.url).unwrap_or_else(|| "/".into());
    let inserted = with_tx!(tx, |conn| {
        sqlx::query(
        "insert into visit_resources (tenant_id, id, at, visit_id, session_id, visitor_id, external_id, name, type, \
         url, path, status_code, duration_ms, transfer_bytes, tags) \
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) on conflict (tenant_id, id) do nothing"
    )
    .bind(tenant_id)
    .bind(&r.id)
    .bind(r.at)
    .bind(&r.visit_id)
    .bind(&r.session_id)
    .bind(&r.visitor_id)
    .bind(&r.external_id)
    .bind(cut(&r.name, 100))
    .bind(cut(&r.kind, 100))
    .bind(&r.url)
    .bind(&path)
    .bind(r.status_code)
    .bind(r.duration_ms)
    .bind(r.transfer_bytes)
    .bind(tags_column(&r.tags))
    .execute(conn)
    .await
    .map(|res| res.rows_affected())
    })?;
    if inserted == 0 {
        return Ok(false);
    }
    let errors = i64::from(r.status_code.is_some_and(|c| c >= 400));
    // The same sums per UTC hour and per local day; `$10` is the zone of day rows.
    for (table, period, zone_column, zone_value) in [
        ("resource_rollups", hour_of(r.at), "", ""),
        ("resource_day_rollups", day_start(zone, r.at), "zone, ", "$10, "),
    ] {
        let time = if zone_column.is_empty() { "hour" } else { "day" };
        let sql = format!(
            "insert into {table} (tenant_id, {zone_column}{time}, name, type, status_code, loads, duration_sum, \
             duration_max, transfer_sum, transfer_samples, errors) \
             values ($1, {zone_value}$2, $3, $4, $5, 1, $6, $6, $7, $8, $9) \
             on conflict (tenant_id, {zone_column}{time}, name, type, status_code) do update set \
             loads = {table}.loads + 1, \
             duration_sum = {table}.duration_sum + excluded.duration_sum, \
             duration_max = case when excluded.duration_max > {table}.duration_max \
                 then excluded.duration_max else {table}.duration_max end, \
             transfer_sum = {table}.transfer_sum + excluded.transfer_sum, \
             transfer_samples = {table}.transfer_samples + excluded.transfer_samples, \
             errors = {table}.errors + excluded.errors"
        );
        with_tx!(tx, |conn| {
            let q = sqlx::query(&sql)
                .bind(tenant_id)
                .bind(period)
                .bind(cut(&r.name, 100))
                .bind(cut(&r.kind, 100))
                .bind(r.status_code.unwrap_or(-1))
                .bind(r.duration_ms)
                .bind(r.transfer_bytes.unwrap_or(0))
                .bind(i64::from(r.transfer_bytes.is_some()))
                .bind(errors);
            let q = if zone_column.is_empty() { q } else { q.bind(zone.name()) };
            q.execute(conn).await.map(|r| r.rows_affected())
        })?;
    }
    Ok(true)
}

/// Stores a script error (once per id) and counts it on its local day in `zone`,
/// the tenant's day-rollup zone.
pub(crate) async fn store_script_error(
    tx: &mut crate::db::Tx,
    tenant_id: &TenantId,
    zone: Tz,
    e: &ScriptErrorIn,
) -> CoreResult<bool> {
    let path = url_path(&e.url).unwrap_or_else(|| "/".into());
    let inserted = with_tx!(tx, |conn| {
        sqlx::query(
        "insert into script_errors (tenant_id, id, at, visit_id, session_id, visitor_id, external_id, url, path, \
         file_name, line, col, message, tags, stack) \
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) on conflict (tenant_id, id) do nothing"
    )
    .bind(tenant_id)
    .bind(&e.id)
    .bind(e.at)
    .bind(&e.visit_id)
    .bind(&e.session_id)
    .bind(&e.visitor_id)
    .bind(&e.external_id)
    .bind(&e.url)
    .bind(&path)
    .bind(&e.file_name)
    .bind(e.line)
    .bind(e.column)
    .bind(cut(&e.message, 1000))
    .bind(tags_column(&e.tags))
    .bind(e.stack.as_deref().map(|s| cut(s.trim_end(), MAX_STACK_CHARS)).filter(|s| !s.is_empty()))
    .execute(conn)
    .await
    .map(|res| res.rows_affected())
    })?;
    if inserted == 1 {
        mark_error_day(tx, tenant_id, zone, e.visitor_id.as_deref(), e.at).await?;
    }
    Ok(inserted == 1)
}
