//! Watchdogs on live events, grouped per watchdog and window.
//!
//! Where something a watchdog type names happens, the code that makes it
//! happen calls [`fire`] in its own transaction:
//! - `JAVASCRIPT_ERROR`: the visitor script reports script errors (`/widget/track`);
//! - `MESSAGE_RECEIVED`: a customer's message is stored (`record_inbound`);
//! - `CUSTOMER_ASSIGNED`: a customer is assigned to a user or a team, by a person
//!   or by the routing engine;
//! - `FORM_SUBMISSION`: a visitor sends a contact form (`/widget/form`);
//! - `SETTING_CHANGED`: any audited write of a setting ([`is_setting_action`];
//!   [`setting_changed`] observes the audit log, so new settings are covered by default).
//!
//! **Grouping.** A storm (a thousand script errors a minute) must not send a
//! thousand mails. Each watchdog counts its events in windows of the tenant's
//! grouping period (`tenants.watchdog_window_seconds`, [`DEFAULT_WINDOW_SECONDS`]
//! by default, aligned to the clock: 10:00, 10:05, …). The first event of a window
//! is alerted at once; later events of the window are only counted
//! (`watchdog_windows`); when the window ends a durable job
//! ([`JobKind::WatchdogSummary`]) sends one summary, "and N more", with the count
//! and the latest event, unless nothing more happened. So a storm costs each
//! receiver at most two alerts per window. On PostgreSQL the window row is an
//! upsert on its key, so concurrent events agree on which one was first.
//!
//! **Cost.** [`fire`] reads the tenant's watchdogs inside the caller's
//! transaction: one probe of the `config_objects` primary key, which finds
//! nothing for most tenants, and no cache that could go stale across instances.
//! Only when a watchdog of the type exists does it write (the window row, and on
//! a window's first event the alert and the summary jobs).

use super::alerts::{self, Alert};
use crate::{
    audit::{self, Actor},
    config::watchdogs::{Watchdog, WatchdogType},
    conversations::{customer_name, Message, MessageType},
    customers::Customer,
    db::Tx,
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    jobs::{self, Job, JobKind},
    time::now_ms,
    validate::Checks,
    with_db, with_tx, Services,
};

/// The grouping window a tenant starts with: 5 minutes.
pub const DEFAULT_WINDOW_SECONDS: i64 = 300;

/// The longest grouping window: a day.
pub const MAX_WINDOW_SECONDS: i64 = 86_400;

/// The longest summary text kept from one event.
const SUMMARY_CHARS: usize = 500;

/// Fires every watchdog of `kind` of the tenant for one event, in `tx` (see the
/// module doc for the grouping). `summary` says what happened; `link` is a
/// dashboard path to it.
pub(crate) async fn fire(
    tx: &mut Tx,
    tenant_id: &TenantId,
    kind: WatchdogType,
    summary: &str,
    link: Option<&str>,
) -> CoreResult<()> {
    let watchdogs = watching(tx, tenant_id, kind).await?;
    fire_for(tx, tenant_id, kind, &watchdogs, summary, link, 1).await
}

/// The tenant's watchdogs of `kind` that have receivers, read in `tx`.
async fn watching(tx: &mut Tx, tenant_id: &TenantId, kind: WatchdogType) -> CoreResult<Vec<Watchdog>> {
    let rows: Vec<(String, String)> = with_tx!(tx, |conn| sqlx::query_as(
        "select id, body from config_objects where tenant_id = $1 and kind = 'watchdog'"
    )
    .bind(tenant_id)
    .fetch_all(conn)
    .await)?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, body)| {
            let mut w: Watchdog = serde_json::from_str(&body).ok()?;
            w.meta.id = Some(id);
            Some(w)
        })
        .filter(|w| w.watchdog_type == Some(kind) && !w.receivers.is_empty())
        .collect())
}

/// Counts `count` events for each of `watchdogs` and alerts the ones that
/// open a window.
async fn fire_for(
    tx: &mut Tx,
    tenant_id: &TenantId,
    kind: WatchdogType,
    watchdogs: &[Watchdog],
    summary: &str,
    link: Option<&str>,
    count: i64,
) -> CoreResult<()> {
    if watchdogs.is_empty() {
        return Ok(());
    }
    let window_ms = window_seconds_in(tx, tenant_id).await? * 1000;
    let start = window_start(now_ms(), window_ms);
    let summary = cut(summary, SUMMARY_CHARS);
    for watchdog in watchdogs {
        let id = watchdog.meta.id.as_deref().unwrap_or_default();
        let events: i64 = with_tx!(tx, |conn| {
            sqlx::query_scalar(
                "insert into watchdog_windows (tenant_id, watchdog_id, window_start, window_ms, events, sent_events, \
             last_summary, last_link) values ($1, $2, $3, $4, $5, $5, $6, $7) \
             on conflict (tenant_id, watchdog_id, window_start, window_ms) do update set \
             events = watchdog_windows.events + excluded.events, last_summary = excluded.last_summary, \
             last_link = excluded.last_link returning events",
            )
            .bind(tenant_id)
            .bind(id)
            .bind(start)
            .bind(window_ms)
            .bind(count)
            .bind(&summary)
            .bind(link)
            .fetch_one(conn)
            .await
        })?;
        if events != count {
            // Not the window's first: counted for its summary.
            continue;
        }
        let mut alert = Alert::new(
            kind_name(kind),
            format!("{}: {}", name_of(watchdog), label(kind)),
            summary.clone(),
            link.map(str::to_string),
        );
        alert.count = count;
        alerts::deliver(tx, tenant_id, &watchdog.receivers, &alert).await?;
        jobs::schedule_payload(
            tx,
            Some(tenant_id),
            // A window is its start and its length: after the period changes,
            // a window of the new length may start where an old one did.
            &format!("{tenant_id}:{id}:{start}:{window_ms}"),
            start + window_ms,
            &WindowEnd {
                watchdog_id: id.to_string(),
                window_start: start,
                window_ms,
            },
        )
        .await?;
    }
    Ok(())
}

/// The start of the window `at` falls in, windows being `window_ms` long and
/// aligned to the epoch.
fn window_start(at: i64, window_ms: i64) -> i64 {
    at - at.rem_euclid(window_ms.max(1))
}

/// The tenant's grouping window in seconds, read in `tx`.
async fn window_seconds_in(tx: &mut Tx, tenant_id: &TenantId) -> CoreResult<i64> {
    let seconds: Option<i64> = with_tx!(tx, |conn| sqlx::query_scalar(
        "select watchdog_window_seconds from tenants where id = $1"
    )
    .bind(tenant_id)
    .fetch_optional(conn)
    .await)?;
    Ok(seconds.unwrap_or(DEFAULT_WINDOW_SECONDS).clamp(1, MAX_WINDOW_SECONDS))
}

/// The wire name of a type (`JAVASCRIPT_ERROR`), an alert's `kind`.
fn kind_name(kind: WatchdogType) -> &'static str {
    match kind {
        WatchdogType::JavascriptError => "JAVASCRIPT_ERROR",
        WatchdogType::MessageReceived => "MESSAGE_RECEIVED",
        WatchdogType::CustomerAssigned => "CUSTOMER_ASSIGNED",
        WatchdogType::FormSubmission => "FORM_SUBMISSION",
        WatchdogType::SettingChanged => "SETTING_CHANGED",
    }
}

/// What an event of a type is called in an alert's title.
fn label(kind: WatchdogType) -> &'static str {
    match kind {
        WatchdogType::JavascriptError => "script error",
        WatchdogType::MessageReceived => "customer message",
        WatchdogType::CustomerAssigned => "customer assigned",
        WatchdogType::FormSubmission => "form submitted",
        WatchdogType::SettingChanged => "setting changed",
    }
}

fn cut(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// A watchdog's name, for titles.
fn name_of(watchdog: &Watchdog) -> &str {
    watchdog.name.as_deref().unwrap_or("Watchdog")
}

// The events, as their hooks describe them. Each is the one call its hook
// makes, so the files that raise events stay as they were but for that line.

/// `MESSAGE_RECEIVED`: a customer's message was stored.
pub(crate) async fn message_received(tx: &mut Tx, tenant_id: &TenantId, message: &Message) -> CoreResult<()> {
    let text = match (&message.kind, &message.message) {
        (MessageType::Message, Some(text)) => format!("A customer wrote: {text}"),
        (kind, _) => format!("A customer sent {}", kind.as_str().to_lowercase()),
    };
    let link = format!("/inbox/{}", message.customer_id);
    fire(tx, tenant_id, WatchdogType::MessageReceived, &text, Some(&link)).await
}

/// `CUSTOMER_ASSIGNED`: a customer was assigned to a user or a team (not an
/// unassignment).
pub(crate) async fn customer_assigned(tx: &mut Tx, tenant_id: &TenantId, customer: &Customer) -> CoreResult<()> {
    let watchdogs = watching(tx, tenant_id, WatchdogType::CustomerAssigned).await?;
    if watchdogs.is_empty() || (customer.assigned_user.is_none() && customer.assigned_team.is_none()) {
        return Ok(());
    }
    let to: Option<String> = match (&customer.assigned_user, &customer.assigned_team) {
        (Some(user), _) => with_tx!(tx, |conn| sqlx::query_scalar(
            "select coalesce(display_name, email) from users where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(user)
        .fetch_optional(conn)
        .await)?,
        (None, Some(team)) => with_tx!(tx, |conn| sqlx::query_scalar(
            "select name from teams where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(team)
        .fetch_optional(conn)
        .await)?
        .map(|name: String| format!("team {name}")),
        (None, None) => None,
    };
    let text = format!(
        "{} was assigned to {}",
        customer_name(customer),
        to.unwrap_or_else(|| "someone no longer here".into())
    );
    let link = format!("/inbox/{}", customer.id);
    fire_for(
        tx,
        tenant_id,
        WatchdogType::CustomerAssigned,
        &watchdogs,
        &text,
        Some(&link),
        1,
    )
    .await
}

/// `JAVASCRIPT_ERROR`: the visitor script reported `count` new script errors,
/// the first of them `message` on `url`.
pub(crate) async fn script_errors(
    tx: &mut Tx,
    tenant_id: &TenantId,
    message: &str,
    url: &str,
    count: i64,
) -> CoreResult<()> {
    if count < 1 {
        return Ok(());
    }
    let watchdogs = watching(tx, tenant_id, WatchdogType::JavascriptError).await?;
    let mut text = format!("{message} (on {url})");
    if count > 1 {
        text.push_str(&format!(", and {} more in the same report", count - 1));
    }
    fire_for(
        tx,
        tenant_id,
        WatchdogType::JavascriptError,
        &watchdogs,
        &text,
        Some("/reports/script-errors"),
        count,
    )
    .await
}

/// `FORM_SUBMISSION`: a visitor sent a form, stored as its message.
pub(crate) async fn form_submitted(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    text: &str,
) -> CoreResult<()> {
    let link = format!("/inbox/{customer_id}");
    fire(tx, tenant_id, WatchdogType::FormSubmission, text, Some(&link)).await
}

/// Audit actions that are not settings: what customers, conversations and
/// messages go through, meetings, sessions and links, a user's notifications,
/// visitors' forms. Every other audited action is a setting, so a new kind of
/// setting is watched without anyone remembering to add it.
const NOT_SETTINGS: &[&str] = &[
    "customer.",
    "conversation.",
    "message.",
    "appointment.",
    "session.",
    "liveview.",
    "cobrowse.",
    "notification.",
    "note.",
    "form.",
    "routing.",
    "webhook.test",
    "webhook.replay",
];

/// Whether an audited action is a settings write (`SETTING_CHANGED`).
pub fn is_setting_action(action: &str) -> bool {
    !NOT_SETTINGS.iter().any(|p| action.starts_with(p))
}

/// `SETTING_CHANGED`: the audit log's [`audit::Observer`] (registered by
/// `Services::new`), so every audited action of a tenant comes here, present
/// and future; it fires for settings writes only.
pub(crate) fn setting_changed<'a>(
    tx: &'a mut Tx,
    audited: audit::Audited<'a>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = CoreResult<()>> + Send + 'a>> {
    Box::pin(async move {
        let audit::Audited {
            tenant_id,
            actor,
            action,
            resource_type,
            resource_id,
        } = audited;
        if !is_setting_action(action) {
            return Ok(());
        }
        let text = format!(
            "{action} on {resource_type}{} by {}",
            resource_id.map(|id| format!(" {id}")).unwrap_or_default(),
            actor.label()
        );
        let link = format!("/settings/audit?action={action}");
        fire(tx, tenant_id, WatchdogType::SettingChanged, &text, Some(&link)).await
    })
}

impl Services {
    /// Ends a watchdog's window (a [`JobKind::WatchdogSummary`] job): when more
    /// happened after its first event, sends one summary with the count and
    /// the latest event. Runs once: the window's row goes in the same
    /// transaction.
    pub(crate) async fn watchdog_summary(&self, job: &Job) -> CoreResult<()> {
        let tenant_id = job
            .tenant_id
            .clone()
            .ok_or_else(|| CoreError::Internal("a watchdog window without a tenant".into()))?;
        let Some(WindowEnd {
            watchdog_id,
            window_start: start,
            window_ms,
        }) = job.read::<WindowEnd>()
        else {
            return Ok(());
        };
        let mut tx = self.db().begin().await?;
        let window: Option<(i64, i64, String, Option<String>)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "delete from watchdog_windows where tenant_id = $1 and watchdog_id = $2 and window_start = $3 \
             and window_ms = $4 returning events, sent_events, last_summary, last_link"
        )
        .bind(&tenant_id)
        .bind(&watchdog_id)
        .bind(start)
        .bind(window_ms)
        .fetch_optional(conn)
        .await)?;
        let Some((events, sent, latest, link)) = window else {
            return tx.commit().await;
        };
        let more = events - sent;
        let watchdog = watching_by_id(&mut tx, &tenant_id, &watchdog_id).await?;
        let (Some(watchdog), true) = (watchdog, more > 0) else {
            // Nothing more happened, or the watchdog is gone.
            return tx.commit().await;
        };
        let Some(kind) = watchdog.watchdog_type else {
            return tx.commit().await;
        };
        let mut alert = Alert::new(
            kind_name(kind),
            format!("{}: {more} more ({})", name_of(&watchdog), label(kind)),
            format!("And {more} more since the first alert of this period. The latest: {latest}"),
            link,
        );
        alert.count = more;
        let notified = self
            .write_alert(&mut tx, &tenant_id, &watchdog.receivers, &alert)
            .await?;
        self.commit_alerts(tx, &tenant_id, notified).await
    }

    /// The tenant's grouping window for watchdog alerts, in seconds.
    pub async fn watchdog_window(&self, tenant_id: &TenantId) -> CoreResult<i64> {
        let seconds: Option<i64> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select watchdog_window_seconds from tenants where id = $1"
        )
        .bind(tenant_id)
        .fetch_optional(pool)
        .await)?;
        seconds.ok_or(CoreError::NotFound("tenant"))
    }

    /// Sets the tenant's grouping window (1 second to a day); windows already
    /// open keep their length.
    pub async fn set_watchdog_window(&self, tenant_id: &TenantId, seconds: i64, actor: &Actor) -> CoreResult<()> {
        let mut checks = Checks::new();
        checks.in_range("windowSeconds", seconds, 1..=MAX_WINDOW_SECONDS);
        checks.finish()?;
        let mut tx = self.db().begin().await?;
        let changed = with_tx!(&mut tx, |conn| sqlx::query(
            "update tenants set watchdog_window_seconds = $2 where id = $1"
        )
        .bind(tenant_id)
        .bind(seconds)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if changed == 0 {
            return Err(CoreError::NotFound("tenant"));
        }
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "tenant.watchdog_window",
            "tenant",
            Some(tenant_id),
        )
        .await?;
        tx.commit().await
    }
}

/// One watchdog by id, read in `tx`.
async fn watching_by_id(tx: &mut Tx, tenant_id: &TenantId, id: &str) -> CoreResult<Option<Watchdog>> {
    let body: Option<String> = with_tx!(tx, |conn| sqlx::query_scalar(
        "select body from config_objects where tenant_id = $1 and kind = 'watchdog' and id = $2"
    )
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(conn)
    .await)?;
    Ok(body.and_then(|b| serde_json::from_str(&b).ok()))
}

/// The end of a watchdog's grouping window ([`JobKind::WatchdogSummary`]).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WindowEnd {
    /// The watchdog.
    watchdog_id: String,
    /// When its window began, unix ms.
    window_start: i64,
    /// How long the window is, ms (migration 0048 wrote it into the jobs of
    /// windows opened before).
    window_ms: i64,
}

impl jobs::Payload for WindowEnd {
    const KIND: JobKind = JobKind::WatchdogSummary;
}

#[cfg(test)]
mod tests;
