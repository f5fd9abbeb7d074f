//! What the visitor script reports: visits, recorded sessions with their reason,
//! page resources, script errors and the action rules that matched. The endpoint is public (authenticated by the
//! tenant's widget key), so every batch is bounded, every field checked, and every
//! event carries a client id: a retried batch is recorded once.

mod batch;
mod checks;

use chrono_tz::Tz;

pub use batch::{
    ActionRuleMatchIn, ResourceIn, ScriptErrorIn, SessionIn, TrackBatch, TrackEvent, TrackResult, VisitIn,
};
pub use checks::MAX_BATCH;
use checks::{cut, MAX_STACK_CHARS};
pub(crate) use checks::{url_path, validate};

use super::{
    catalogue::{ACTION_RULE_MATCH, SESSION},
    days::{day_start, rollup_zone},
    errors::mark_error_day,
    facts::{add_rollup, hour_of, record, tags_column, Fact},
    visitors::mark_visitor_day,
};
use crate::{config::rules::action::ActionRule, error::CoreResult, ids::TenantId, with_tx};

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
