//! Recorded visitor sessions (spec 2.14): the whole path of a visitor until the
//! browser closes. This module keeps their metadata (visitor, pages, times, tags);
//! the recorded events themselves arrive with the visitor script.
//!
//! Tag filtering is **all-of**: a session matches `tagsFilter` when it carries every
//! listed tag (an empty filter matches all). Sessions are listed newest first.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::{placeholders, Arg, TenantTable, Tx},
    error::{CoreError, CoreResult},
    ids::TenantId,
    model::{Page, PageRequest},
    time::{from_ms, now_ms},
    validate::{Checks, Paging},
    with_db, with_tx, Services,
};

/// A recorded session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedSession {
    /// Session id (chosen by the recorder, unique in the tenant).
    pub id: String,
    /// The visitor's id.
    pub visitor_id: String,
    /// The id set through the client script API, if any.
    pub external_id: Option<String>,
    /// The first page.
    pub entry_url: Option<String>,
    /// Pages seen.
    pub page_count: i32,
    /// Start.
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// End, once the browser closed.
    pub ended_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Length in seconds, once ended.
    pub duration_seconds: Option<i64>,
    /// Tags, sorted.
    pub tags: Vec<String>,
    /// Our extension: bytes the visitor script's recording of the session takes
    /// in storage (its compressed events); 0 for a session only reported.
    pub recorded_bytes: i64,
    /// Our extension: why the session was recorded, once it ended (a visitor
    /// script's session ends after 30 minutes without events): `CHAT` (the
    /// visitor chatted), `LIVE_VIEW` (an agent watched it), `ERROR` (a script
    /// error hit the visitor) or `BROWSE`. `null` while it goes on, and for
    /// sessions only reported.
    pub reason: Option<String>,
}

/// A session reported by a recorder (upsert by `id`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedSessionIn {
    /// Session id, 1–200 characters (required).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub id: Option<String>,
    /// The visitor's id, 1–200 characters (required).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub visitor_id: Option<String>,
    /// The id set through the client script API (at most 200 characters).
    #[schema(max_length = 200)]
    pub external_id: Option<String>,
    /// The first page, an http(s) URL.
    #[schema(format = "uri", max_length = 2048)]
    pub entry_url: Option<String>,
    /// Pages seen so far (0–100000, default 1).
    #[schema(minimum = 0, maximum = 100000)]
    pub page_count: Option<i32>,
    /// Start (required).
    #[schema(required = true, nullable = false)]
    pub started_at: Option<chrono::DateTime<chrono::Utc>>,
    /// End, once the browser closed; not before `startedAt`.
    pub ended_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Unique tags (at most 50, each 1–64 characters).
    #[schema(value_type = Option<Vec<crate::validate::Tag>>, max_items = 50)]
    pub tags: Option<Vec<String>>,
}

/// The spec's `Pageable`. `paged`/`unpaged` and `sort` are accepted for
/// compatibility; listing everything at once (`unpaged: true`) is refused because
/// pages are bounded.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pageable {
    /// Page number, from 0.
    #[schema(minimum = 0)]
    pub page_number: Option<i64>,
    /// Items to skip; overrides `pageNumber`.
    #[schema(minimum = 0)]
    pub offset: Option<i64>,
    /// Items per page, 1–200 (default 20).
    #[schema(minimum = 1, maximum = 200)]
    pub page_size: Option<i64>,
    /// Accepted; paging is always on.
    pub paged: Option<bool>,
    /// `true` is refused (422).
    pub unpaged: Option<bool>,
    /// Accepted and ignored: sessions are listed newest first.
    pub sort: Option<SortFlags>,
}

/// Spring's sort flags, accepted for compatibility.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SortFlags {
    /// Ignored.
    pub sorted: Option<bool>,
    /// Ignored.
    pub unsorted: Option<bool>,
    /// Ignored.
    pub empty: Option<bool>,
}

/// The spec's `SessionFilter`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionFilter {
    /// Sessions carrying every one of these tags.
    #[serde(default)]
    pub tags_filter: Vec<String>,
}

impl Pageable {
    /// `unpaged: true` is refused, as a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{"properties": {"unpaged": {"not": {"const": true}}}}])
    }
}

/// The recorded sessions query (spec 2.14).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"pageable": {"pageNumber": 0, "pageSize": 20}, "tagFilter": {"tagsFilter": ["vip"]}}))]
pub struct RecordedSessionsQuery {
    /// Paging.
    #[serde(default)]
    pub pageable: Pageable,
    /// Tag filter (all-of).
    #[serde(default)]
    pub tag_filter: SessionFilter,
}

/// Recorded sessions, as [`SessionRow`] reads them.
const SESSIONS: TenantTable = TenantTable {
    table: "recorded_sessions",
    columns: "id, visitor_id, external_id, entry_url, page_count, started_at, ended_at, recorded_bytes, reason",
    what: "session",
    narrow: "",
};

#[derive(sqlx::FromRow)]
struct SessionRow {
    id: String,
    visitor_id: String,
    external_id: Option<String>,
    entry_url: Option<String>,
    page_count: i32,
    started_at: i64,
    ended_at: Option<i64>,
    recorded_bytes: i64,
    reason: Option<String>,
}

/// A session's tags, in order.
const SESSION_TAGS: &str =
    "select tag from recorded_session_tags where tenant_id = $1 and session_id = $2 order by tag";

/// A session's tags, read in `tx`.
pub(crate) async fn tags_in(tx: &mut Tx, tenant_id: &TenantId, session_id: &str) -> CoreResult<Vec<String>> {
    Ok(with_tx!(tx, |conn| sqlx::query_scalar(SESSION_TAGS)
        .bind(tenant_id)
        .bind(session_id)
        .fetch_all(conn)
        .await)?)
}

impl Services {
    /// A recorded session's tags (none for an unknown session): what the
    /// reports of what happened in it are filtered by.
    pub(crate) async fn recording_tags(&self, tenant_id: &TenantId, session_id: &str) -> CoreResult<Vec<String>> {
        Ok(with_db!(self.db(), |pool| sqlx::query_scalar(SESSION_TAGS)
            .bind(tenant_id)
            .bind(session_id)
            .fetch_all(pool)
            .await)?)
    }
}

/// Replaces a session's tags with `tags` (checked by the caller), in `tx`.
pub(crate) async fn replace_tags(
    tx: &mut Tx,
    tenant_id: &TenantId,
    session_id: &str,
    tags: &[String],
) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "delete from recorded_session_tags where tenant_id = $1 and session_id = $2"
    )
    .bind(tenant_id)
    .bind(session_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    let mut unique: Vec<&String> = tags.iter().collect();
    unique.sort();
    unique.dedup();
    for tag in unique {
        with_tx!(tx, |conn| sqlx::query(
            "insert into recorded_session_tags (tenant_id, session_id, tag) values ($1, $2, $3)"
        )
        .bind(tenant_id)
        .bind(session_id)
        .bind(tag)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    }
    Ok(())
}

impl Services {
    /// Records (or updates) a session's metadata.
    pub async fn record_session(
        &self,
        tenant_id: &TenantId,
        input: RecordedSessionIn,
        actor: &Actor,
    ) -> CoreResult<RecordedSession> {
        let mut checks = Checks::new();
        let id = checks.required_text("id", input.id.as_deref(), 200);
        let visitor_id = checks.required_text("visitorId", input.visitor_id.as_deref(), 200);
        let external_id = checks.optional_text("externalId", input.external_id.as_deref(), 200);
        if let Some(url) = input.entry_url.as_deref() {
            checks.http_url("entryUrl", url);
        }
        let page_count = input.page_count.unwrap_or(1);
        checks.in_range("pageCount", page_count.into(), 0..=100_000);
        let Some(started) = input.started_at else {
            checks.push("startedAt", "required", "startedAt is required");
            return Err(checks.finish().unwrap_err());
        };
        if input.ended_at.is_some_and(|e| e < started) {
            checks.push("endedAt", "before_start", "endedAt must not be before startedAt");
        }
        let tags = input.tags.unwrap_or_default();
        checks.tags("tags", &tags, 50);
        checks.finish()?;

        let now = now_ms();
        let ended = input.ended_at.map(|e| e.timestamp_millis());
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| {
            sqlx::query(
            "insert into recorded_sessions (tenant_id, id, visitor_id, external_id, entry_url, page_count, started_at, ended_at, created_at, updated_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) \
             on conflict (tenant_id, id) do update set visitor_id = excluded.visitor_id, external_id = excluded.external_id, \
             entry_url = excluded.entry_url, page_count = excluded.page_count, started_at = excluded.started_at, \
             ended_at = excluded.ended_at, updated_at = excluded.updated_at"
        )
        .bind(tenant_id)
        .bind(&id)
        .bind(&visitor_id)
        .bind(&external_id)
        .bind(&input.entry_url)
        .bind(page_count)
        .bind(started.timestamp_millis())
        .bind(ended)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        replace_tags(&mut tx, tenant_id, &id, &tags).await?;
        audit::record(&mut tx, Some(tenant_id), actor, "session.record", "session", Some(&id)).await?;
        tx.commit().await?;
        self.get_recorded_session(tenant_id, &id).await
    }

    /// One recorded session of the tenant.
    pub async fn get_recorded_session(&self, tenant_id: &TenantId, id: &str) -> CoreResult<RecordedSession> {
        let row: SessionRow = SESSIONS.get(self.db(), tenant_id, id).await?;
        let mut out = self.with_tags(tenant_id, vec![row]).await?;
        Ok(out.remove(0))
    }

    /// Deletes a recorded session: its batches, tags and co-browses (by
    /// cascade) and the live-view links to it. Its report facts keep their
    /// numbers and lose the session's id. Audited as `session.delete`.
    pub async fn delete_recorded_session(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        SESSIONS.read_in::<(String,)>(&mut tx, tenant_id, id, "id").await?;
        for sql in [
            "delete from liveview_tokens where tenant_id = $1 and session_id = $2",
            "update report_facts set subject = null where tenant_id = $1 and subject = $2",
            "update report_facts set dedupe_key = null where tenant_id = $1 and dedupe_key = $2",
            "delete from recorded_sessions where tenant_id = $1 and id = $2",
        ] {
            with_tx!(&mut tx, |conn| sqlx::query(sql)
                .bind(tenant_id)
                .bind(id)
                .execute(conn)
                .await
                .map(|r| r.rows_affected()))?;
        }
        audit::record(&mut tx, Some(tenant_id), actor, "session.delete", "session", Some(id)).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A page of recorded sessions carrying every tag of the filter, newest first.
    pub async fn list_recorded_sessions(
        &self,
        tenant_id: &TenantId,
        query: &RecordedSessionsQuery,
    ) -> CoreResult<Page<RecordedSession>> {
        if query.pageable.unpaged == Some(true) {
            return Err(CoreError::invalid(
                "pageable.unpaged",
                "not_supported",
                "listing everything at once is not supported; page with pageSize up to 200",
            ));
        }
        let paging = Paging::from_request(&PageRequest {
            page_number: query.pageable.page_number,
            page_size: query.pageable.page_size,
            offset: query.pageable.offset,
        })
        .map_err(|e| match e {
            CoreError::Validation(fields) => CoreError::Validation(
                fields
                    .into_iter()
                    .map(|mut f| {
                        f.field = format!("pageable.{}", f.field);
                        f
                    })
                    .collect(),
            ),
            other => other,
        })?;
        let mut tags: Vec<String> = query.tag_filter.tags_filter.clone();
        tags.sort();
        tags.dedup();
        let mut checks = Checks::new();
        checks.tags("tagFilter.tagsFilter", &tags, 50);
        checks.finish()?;

        // All-of: the session has as many distinct matching tags as the filter lists.
        let matching = if tags.is_empty() {
            String::new()
        } else {
            format!(
                " and id in (select session_id from recorded_session_tags where tenant_id = $1 and tag in ({}) \
                 group by session_id having count(distinct tag) = {})",
                placeholders(2, tags.len()),
                tags.len()
            )
        };
        let n = tags.len();
        let count_sql = format!("select count(*) from recorded_sessions where tenant_id = $1{matching}");
        let list_sql = format!(
            "select id, visitor_id, external_id, entry_url, page_count, started_at, ended_at, recorded_bytes, reason from recorded_sessions \
             where tenant_id = $1{matching} order by started_at desc, id desc limit ${} offset ${}",
            n + 2,
            n + 3
        );
        let args: Vec<Arg> = std::iter::once(tenant_id.into())
            .chain(tags.iter().map(|t| t.as_str().into()))
            .collect();
        let (total, rows): (i64, Vec<SessionRow>) =
            crate::db::page(self.db(), &count_sql, &list_sql, &args, &paging).await?;
        let sessions = self.with_tags(tenant_id, rows).await?;
        Ok(paging.page(total, sessions))
    }

    async fn with_tags(&self, tenant_id: &TenantId, rows: Vec<SessionRow>) -> CoreResult<Vec<RecordedSession>> {
        // Every session's tags in one query, grouped here.
        let mut tags_of: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
        if !rows.is_empty() {
            let sql = format!(
                "select session_id, tag from recorded_session_tags where tenant_id = $1 and session_id in ({}) \
                 order by session_id, tag",
                placeholders(2, rows.len())
            );
            let pairs: Vec<(String, String)> = with_db!(self.db(), |pool| {
                let mut query = sqlx::query_as(&sql).bind(tenant_id);
                for r in &rows {
                    query = query.bind(&r.id);
                }
                query.fetch_all(pool).await
            })?;
            for (session, tag) in pairs {
                tags_of.entry(session).or_default().push(tag);
            }
        }
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let tags = tags_of.remove(&r.id).unwrap_or_default();
            out.push(RecordedSession {
                duration_seconds: r.ended_at.map(|e| (e - r.started_at) / 1000),
                id: r.id,
                visitor_id: r.visitor_id,
                external_id: r.external_id,
                entry_url: r.entry_url,
                page_count: r.page_count,
                started_at: from_ms(r.started_at),
                ended_at: r.ended_at.map(from_ms),
                recorded_bytes: r.recorded_bytes,
                reason: r.reason,
                tags,
            });
        }
        Ok(out)
    }
}
