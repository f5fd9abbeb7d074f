//! The reads of a report, batched into one statement.
//!
//! On a small period a report's cost is its round trips, not its rows: each
//! statement through sqlx's SQLite worker costs tens of microseconds whatever
//! it reads, as much as reading a week of day rows. So the reads are planned
//! first, each as SQL with its own `$1…` placeholders, and [`Reads::run`]
//! renumbers them and sends them as one `UNION ALL` of rows shaped
//! `(tag, b, k, t, n)`. The tag says what a row is:
//! - `0…`: a grid row `(bucket, key, total, samples)` for the grid of that
//!   index: day rollups, hourly rollups and raw facts alike;
//! - [`CHECK_TAG`]: the tenant's zone state read back, when the report was
//!   planned with a cached one (see [`super::zones`]);
//! - below it: a presence interval `(user, start, end)` of one
//!   [`IntervalRead`], which is cut into buckets here.
//!
//! On SQLite the rows come back packed, one row per tag and bucket (see
//! [`super::sql::packed`]).

use std::sync::Arc;

use super::{
    catalogue::Source,
    cells::Grid,
    plan::Filter,
    sql::{bind_cond, packed, unpack, Bind, Cond},
    window::{Window, ZoneCheck},
    zones::CHECK_SQL,
};
use crate::{
    db::Db,
    error::CoreResult,
    ids::{TenantId, UserId},
    time::now_ms,
    Services,
};

/// SQLite refuses a compound statement of more than 500 parts; a report rarely
/// has more than twenty, but a long custom range crossing many offset changes
/// could, so larger batches go out in several statements.
const MAX_BRANCHES: usize = 200;

/// The tag of the row that reads the tenant's zone state back.
const CHECK_TAG: i64 = -1;
/// An open interval's end in the `n` column (no interval ends before 1970).
const OPEN: i64 = -1;

/// The tag of interval read `read`.
fn interval_tag(read: usize) -> i64 {
    CHECK_TAG - 1 - read as i64
}

/// A statement's text with its bound values (placeholders numbered from `$1`),
/// and the tag its rows carry.
struct Branch {
    tag: i64,
    sql: String,
    binds: Vec<Bind>,
}

/// Where presence intervals of one read go: they are cut into `window`'s
/// buckets, clipped to `[start, end)`, under the agent's id or one key.
struct IntervalRead {
    target: usize,
    window: Window,
    start: i64,
    end: i64,
    by_agent: bool,
}

/// The planned reads of one report part, each feeding one grid (its target).
#[derive(Default)]
pub(crate) struct Reads {
    branches: Vec<Branch>,
    interval_reads: Vec<IntervalRead>,
    /// The zone state to confirm, when a window was planned with a cached one.
    check: Option<Arc<ZoneCheck>>,
}

/// `sql` with every placeholder `$n` renumbered to `$(n + offset)`. The SQL is
/// the server's own text, with no `$` in literals.
fn renumber(sql: &str, offset: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        out.push(c);
        if c != '$' {
            continue;
        }
        let mut n = 0usize;
        let mut digits = false;
        while let Some(&(_, d)) = chars.peek() {
            let Some(v) = d.to_digit(10) else { break };
            n = n * 10 + v as usize;
            digits = true;
            chars.next();
        }
        if digits {
            out.push_str(&(n + offset).to_string());
        }
    }
    out
}

/// One `UNION ALL` of `branches`, each row led by its branch's tag.
fn union(branches: &[&Branch]) -> (String, Vec<Bind>) {
    let mut parts = Vec::with_capacity(branches.len());
    let mut binds = Vec::new();
    for (i, branch) in branches.iter().enumerate() {
        parts.push(format!(
            "select cast({} as bigint) as tag, b, k, t, n from ({}) as r{i}",
            branch.tag,
            renumber(&branch.sql, binds.len())
        ));
        binds.extend(branch.binds.iter().cloned());
    }
    (parts.join(" union all "), binds)
}

impl Reads {
    /// Remembers the zone check of a window the reads are planned in.
    fn note(&mut self, window: &Window) {
        if self.check.is_none() {
            self.check.clone_from(&window.check);
        }
    }

    /// Plans the day rollup rows of rollup kind `kind` for the whole local days
    /// `[start, end)` of `window`, read as `read_kind`, for `target`. A day row
    /// is one bucket's value for one group, so nothing is summed in SQL; its day
    /// starts at a local midnight, which lies in one offset segment.
    #[allow(clippy::too_many_arguments)]
    pub fn days(
        &mut self,
        target: usize,
        tenant_id: &TenantId,
        window: &Window,
        kind: &str,
        read_kind: &str,
        filter: &Filter,
        (start, end): (i64, i64),
    ) {
        self.note(window);
        let len = window.unit.len_ms();
        self.per_segment(target, window, (start, end), |s, e, offset| {
            let mut cond = Cond::new();
            cond.any_of(9, "group_key", &filter.rule_ids);
            let sql = format!(
                "select (day + $7) / $8 as b, group_key as k, total as t, samples as n from report_day_rollups \
                 where tenant_id = $1 and zone = $2 and kind = $3 and group_kind = $4 and day >= $5 and day < $6{}",
                cond.sql
            );
            let mut binds = vec![
                Bind::Text(tenant_id.to_string()),
                Bind::Text(window.tz.name().to_string()),
                Bind::Text(kind.to_string()),
                Bind::Text(read_kind.to_string()),
                Bind::Int(s),
                Bind::Int(e),
                Bind::Int(offset),
                Bind::Int(len),
            ];
            binds.extend(cond.binds);
            (sql, binds)
        });
    }

    /// Plans the hourly rollup rows of `[start, end)` (whole UTC hours of an
    /// hour-aligned window) for `target`, read as `read_kind`.
    #[allow(clippy::too_many_arguments)]
    pub fn rollups(
        &mut self,
        target: usize,
        tenant_id: &TenantId,
        window: &Window,
        kind: &str,
        read_kind: &str,
        filter: &Filter,
        (start, end): (i64, i64),
    ) {
        self.note(window);
        let len = window.unit.len_ms();
        self.per_segment(target, window, (start, end), |s, e, offset| {
            let mut cond = Cond::new();
            cond.any_of(8, "group_key", &filter.rule_ids);
            let sql = format!(
                "select (hour + $6) / $7 as b, group_key as k, cast(sum(total) as bigint) as t, \
                 cast(sum(samples) as bigint) as n from report_rollups where tenant_id = $1 and kind = $2 \
                 and group_kind = $3 and hour >= $4 and hour < $5{} group by 1, 2",
                cond.sql
            );
            let mut binds = vec![
                Bind::Text(tenant_id.to_string()),
                Bind::Text(kind.to_string()),
                Bind::Text(read_kind.to_string()),
                Bind::Int(s),
                Bind::Int(e),
                Bind::Int(offset),
                Bind::Int(len),
            ];
            binds.extend(cond.binds);
            (sql, binds)
        });
    }

    /// Plans one grid read for `target` per offset segment of `window` inside
    /// `[start, end)`: `read` gets the segment's part and offset, and returns its
    /// SQL and bound values.
    fn per_segment(
        &mut self,
        target: usize,
        window: &Window,
        (start, end): (i64, i64),
        mut read: impl FnMut(i64, i64, i64) -> (String, Vec<Bind>),
    ) {
        for seg in window.segments() {
            let (s, e) = (seg.start.max(start), seg.end.min(end));
            if s < e {
                let (sql, binds) = read(s, e, seg.offset);
                self.branches.push(Branch {
                    tag: target as i64,
                    sql,
                    binds,
                });
            }
        }
    }

    /// Plans the raw facts of `[start, end)` for `target`: the naive `GROUP BY`
    /// per offset segment. For presence, `open_only` takes only intervals still open.
    #[allow(clippy::too_many_arguments)]
    pub fn raw(
        &mut self,
        target: usize,
        tenant_id: &TenantId,
        window: &Window,
        source: Source,
        group_kind: &str,
        filter: &Filter,
        (start, end): (i64, i64),
        open_only: bool,
    ) {
        self.note(window);
        let (table, at, value, key_column) = match source {
            Source::Presence(state) => {
                return self.presence(target, tenant_id, window, state, group_kind, (start, end), open_only)
            }
            Source::Fact(_) => (
                "report_facts",
                "at",
                "value",
                match group_kind {
                    "AGENT" => "agent_id",
                    "DIM" => "dim",
                    _ => "",
                },
            ),
            Source::Visits | Source::PageViews => (
                "visits",
                "started_at",
                if source == Source::Visits {
                    "duration_ms"
                } else {
                    "page_views"
                },
                match group_kind {
                    "DIM" => "path",
                    "VISITOR" => "visitor_id",
                    _ => "",
                },
            ),
        };
        let len = window.unit.len_ms();
        self.per_segment(target, window, (start, end), |s, e, offset| {
            let mut cond = Cond::new();
            let first = 6;
            if let Source::Fact(kind) = source {
                cond.equals(first, "kind", Some(kind));
                cond.any_of(first, "dim", &filter.rule_ids);
            }
            cond.visit_filters(first, filter);
            let (key_select, group) = if key_column.is_empty() {
                ("''".to_string(), "group by 1")
            } else {
                cond.sql += &format!(" and {key_column} is not null");
                (key_column.to_string(), "group by 1, 2")
            };
            let sql = format!(
                "select ({at} + $4) / $5 as b, {key_select} as k, cast(sum({value}) as bigint) as t, \
                 count(*) as n from {table} where tenant_id = $1 and {at} >= $2 and {at} < $3 {} {group}",
                cond.sql
            );
            let mut binds = vec![
                Bind::Text(tenant_id.to_string()),
                Bind::Int(s),
                Bind::Int(e),
                Bind::Int(offset),
                Bind::Int(len),
            ];
            binds.extend(cond.binds);
            (sql, binds)
        });
    }

    /// Plans the presence intervals of `state` overlapping `[start, end)` (only
    /// the open ones with `open_only`), cut into `window`'s buckets. Their rows
    /// are `(0, user, start, end or OPEN)`.
    #[allow(clippy::too_many_arguments)]
    fn presence(
        &mut self,
        target: usize,
        tenant_id: &TenantId,
        window: &Window,
        state: &str,
        group_kind: &str,
        (start, end): (i64, i64),
        open_only: bool,
    ) {
        let tenant = Bind::Text(tenant_id.to_string());
        let state = Bind::Text(state.to_string());
        let columns =
            format!("select cast(0 as bigint) as b, user_id as k, started_at as t, coalesce(ended_at, {OPEN}) as n");
        let mut reads = vec![(
            format!(
                "{columns} from presence_intervals \
                 where tenant_id = $1 and state = $2 and ended_at is null and started_at < $3"
            ),
            vec![tenant.clone(), state.clone(), Bind::Int(end)],
        )];
        if !open_only {
            reads.push((
                format!(
                    "{columns} from presence_intervals \
                     where tenant_id = $1 and state = $2 and ended_at > $3 and started_at < $4"
                ),
                vec![tenant, state, Bind::Int(start), Bind::Int(end)],
            ));
        }
        for (sql, binds) in reads {
            self.branches.push(Branch {
                tag: interval_tag(self.interval_reads.len()),
                sql,
                binds,
            });
            self.interval_reads.push(IntervalRead {
                target,
                window: window.clone(),
                start,
                end,
                by_agent: group_kind == "AGENT",
            });
        }
    }
}

impl Reads {
    /// Sends the planned reads, one statement (or a few, for very large plans),
    /// and adds their rows to `grids`, presence intervals cut into buckets;
    /// with `rekey`, all under the empty key (see [`super::query`]'s
    /// `rollup_read_kind`).
    pub async fn run(self, services: &Services, grids: &mut [Grid], rekey: bool) -> CoreResult<()> {
        let now = now_ms();
        let reads = &self.interval_reads;
        self.fetch(services, |tag, b, key, total, samples| {
            if let Ok(target) = usize::try_from(tag) {
                let key = if rekey { String::new() } else { key.to_string() };
                let cell = grids[target].entry((b, key)).or_default();
                cell.0 += total;
                cell.1 += samples;
                return;
            }
            let read = &reads[(CHECK_TAG - 1 - tag) as usize];
            let ended = if samples == OPEN { now } else { samples };
            let (s, e) = (total.max(read.start), ended.min(read.end));
            let key = if read.by_agent { key } else { "" };
            for (b, ms) in read.window.split(s, e) {
                if ms > 0 {
                    let cell = grids[read.target].entry((b, key.to_string())).or_default();
                    cell.0 += ms;
                    cell.1 += 1;
                }
            }
        })
        .await
    }

    /// The planned reads' presence intervals, uncut: (user, start, end or
    /// `None` while open). The agent time lists read them so.
    pub async fn intervals(&self, services: &Services) -> CoreResult<Vec<(UserId, i64, Option<i64>)>> {
        let mut out = Vec::new();
        self.fetch(services, |tag, _, user, start, end| {
            if tag < CHECK_TAG {
                out.push((UserId::from(user), start, (end != OPEN).then_some(end)));
            }
        })
        .await?;
        Ok(out)
    }

    /// Runs the planned statement(s) and hands every row but the zone check's
    /// to `row` as `(tag, b, k, t, n)`; the zone check, if any, goes to its
    /// [`ZoneCheck`].
    async fn fetch(&self, services: &Services, mut row: impl FnMut(i64, i64, &str, i64, i64)) -> CoreResult<()> {
        let check = self.check.as_ref().map(|check| Branch {
            tag: CHECK_TAG,
            sql: CHECK_SQL.to_string(),
            binds: vec![Bind::Text(check.tenant_id.to_string())],
        });
        let mut checked = None;
        let mut on_row = |tag: i64, b: i64, k: &str, t: i64, n: i64| {
            if tag == CHECK_TAG {
                checked = Some(k.to_string());
            } else {
                row(tag, b, k, t, n);
            }
        };
        let mut chunks: Vec<Vec<&Branch>> = self
            .branches
            .chunks(MAX_BRANCHES)
            .map(|chunk| chunk.iter().collect())
            .collect();
        // The check rides along with the first statement, or alone if nothing
        // else is read: the buckets themselves were cut in the assumed zone.
        match (&check, chunks.first_mut()) {
            (Some(check), Some(first)) => first.push(check),
            (Some(check), None) => chunks.push(vec![check]),
            (None, _) => {}
        }
        for chunk in chunks {
            let (sql, binds) = union(&chunk);
            match services.db() {
                // One row per tag and bucket, its rows packed (see `packed`).
                Db::Sqlite(crate::db::SqlitePools { reads: pool, .. }) => {
                    let cond = Cond {
                        sql: format!(
                            "select tag, b, {} from ({sql}) as u group by tag, b",
                            packed("k", "t", "n")
                        ),
                        binds,
                    };
                    let rows: Vec<(i64, i64, String)> =
                        bind_cond!(sqlx::query_as(&cond.sql), cond).fetch_all(pool).await?;
                    for (tag, b, rows) in rows {
                        for [k, t, n] in unpack(&rows) {
                            on_row(tag, b, k, t.parse().unwrap_or_default(), n.parse().unwrap_or_default());
                        }
                    }
                }
                Db::Postgres(pool) => {
                    let cond = Cond { sql, binds };
                    let rows: Vec<(i64, i64, String, i64, i64)> =
                        bind_cond!(sqlx::query_as(&cond.sql), cond).fetch_all(pool).await?;
                    for (tag, b, k, t, n) in rows {
                        on_row(tag, b, &k, t, n);
                    }
                }
            }
        }
        if let Some(check) = &self.check {
            check.confirm(checked.as_deref());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
