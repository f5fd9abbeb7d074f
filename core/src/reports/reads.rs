//! The reads of a report that hourly rollups and raw facts answer, batched into
//! one statement.
//!
//! On a small history a report's cost is its round trips, not its rows: each
//! statement through sqlx's SQLite worker costs about 0.15 ms whatever it reads.
//! A week of conferences used to take three statements after the day rows (the
//! hours of today, the partial hour, …) and a week of three presence states
//! fifteen (each state's hours, edges and open intervals). So the reads are
//! planned first, each as SQL with its own `$1…` placeholders, and [`Reads::run`]
//! renumbers them and sends them as one `UNION ALL` per row shape: grid rows
//! `(bucket, key, total, samples)`, and presence intervals, which are cut into
//! buckets here. On SQLite the rows come back packed (see [`super::sql::packed`]).

use super::{
    catalogue::Source,
    plan::Filter,
    query::Grid,
    sql::{bind_cond, packed, unpack, Bind, Cond},
    window::Window,
};
use crate::{db::Db, error::CoreResult, time::now_ms, Services};

/// SQLite refuses a compound statement of more than 500 parts; a report rarely
/// has more than twenty, but a long custom range crossing many offset changes
/// could, so larger batches go out in several statements.
const MAX_BRANCHES: usize = 200;

/// A statement's text with its bound values (placeholders numbered from `$1`),
/// and the tag its rows carry: the grid they feed, or their [`IntervalRead`].
struct Branch {
    tag: usize,
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
    grid: Vec<Branch>,
    intervals: Vec<Branch>,
    interval_reads: Vec<IntervalRead>,
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
fn union(branches: &[Branch], columns: &str) -> (String, Vec<Bind>) {
    let mut parts = Vec::with_capacity(branches.len());
    let mut binds = Vec::new();
    for (i, branch) in branches.iter().enumerate() {
        parts.push(format!(
            "select cast({} as bigint) as tag, {columns} from ({}) as r{i}",
            branch.tag,
            renumber(&branch.sql, binds.len())
        ));
        binds.extend(branch.binds.iter().cloned());
    }
    (parts.join(" union all "), binds)
}

impl Reads {
    /// Plans the hourly rollup rows of `[start, end)` (whole UTC hours of an
    /// hour-aligned window) for `target`, read as `read_kind`.
    #[allow(clippy::too_many_arguments)]
    pub fn rollups(
        &mut self,
        target: usize,
        tenant_id: &str,
        window: &Window,
        kind: &str,
        read_kind: &str,
        filter: &Filter,
        (start, end): (i64, i64),
    ) {
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
                self.grid.push(Branch {
                    tag: target,
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
        tenant_id: &str,
        window: &Window,
        source: Source,
        group_kind: &str,
        filter: &Filter,
        (start, end): (i64, i64),
        open_only: bool,
    ) {
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
    /// the open ones with `open_only`), cut into `window`'s buckets.
    #[allow(clippy::too_many_arguments)]
    fn presence(
        &mut self,
        target: usize,
        tenant_id: &str,
        window: &Window,
        state: &str,
        group_kind: &str,
        (start, end): (i64, i64),
        open_only: bool,
    ) {
        let tenant = Bind::Text(tenant_id.to_string());
        let state = Bind::Text(state.to_string());
        let mut branches = vec![Branch {
            tag: 0,
            sql: "select user_id as u, started_at as s, ended_at as e from presence_intervals \
                  where tenant_id = $1 and state = $2 and ended_at is null and started_at < $3"
                .into(),
            binds: vec![tenant.clone(), state.clone(), Bind::Int(end)],
        }];
        if !open_only {
            branches.push(Branch {
                tag: 0,
                sql: "select user_id as u, started_at as s, ended_at as e from presence_intervals \
                      where tenant_id = $1 and state = $2 and ended_at > $3 and started_at < $4"
                    .into(),
                binds: vec![tenant, state, Bind::Int(start), Bind::Int(end)],
            });
        }
        for mut branch in branches {
            branch.tag = self.interval_reads.len();
            self.intervals.push(branch);
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
    /// Sends the planned reads, one statement per row shape (or a few, for very
    /// large plans), and adds their rows to `grids`; with `rekey`, all under the
    /// empty key (see [`super::query`]'s `rollup_read_kind`).
    pub async fn run(self, services: &Services, grids: &mut [Grid], rekey: bool) -> CoreResult<()> {
        let mut add = |tag: i64, b: i64, key: &str, total: i64, samples: i64| {
            let key = if rekey { String::new() } else { key.to_string() };
            let cell = grids[tag as usize].entry((b, key)).or_default();
            cell.0 += total;
            cell.1 += samples;
        };
        for chunk in self.grid.chunks(MAX_BRANCHES) {
            let (sql, binds) = union(chunk, "b, k, t, n");
            match services.db() {
                // One row per grid and bucket, its groups packed (see `packed`).
                Db::Sqlite(pool) => {
                    let sql = format!(
                        "select tag, b, {} from ({sql}) as u group by tag, b",
                        packed("k", "t", "n")
                    );
                    let cond = Cond { sql, binds };
                    let rows: Vec<(i64, i64, String)> =
                        bind_cond!(sqlx::query_as(&cond.sql), cond).fetch_all(pool).await?;
                    for (tag, b, groups) in rows {
                        for [key, total, samples] in unpack(&groups) {
                            add(
                                tag,
                                b,
                                key,
                                total.parse().unwrap_or_default(),
                                samples.parse().unwrap_or_default(),
                            );
                        }
                    }
                }
                Db::Postgres(pool) => {
                    let cond = Cond { sql, binds };
                    let rows: Vec<(i64, i64, String, i64, i64)> =
                        bind_cond!(sqlx::query_as(&cond.sql), cond).fetch_all(pool).await?;
                    for (tag, b, key, total, samples) in rows {
                        add(tag, b, &key, total, samples);
                    }
                }
            }
        }
        let intervals = self.intervals(services).await?;
        let now = now_ms();
        for (tag, user, started, ended) in intervals {
            let read = &self.interval_reads[tag as usize];
            let (s, e) = (started.max(read.start), ended.unwrap_or(now).min(read.end));
            let key = if read.by_agent { user } else { String::new() };
            for (b, ms) in read.window.split(s, e) {
                if ms > 0 {
                    let cell = grids[read.target].entry((b, key.clone())).or_default();
                    cell.0 += ms;
                    cell.1 += 1;
                }
            }
        }
        Ok(())
    }

    /// The planned presence intervals, uncut: (tag, user, start, end or `None`
    /// while open). The agent time lists read them so.
    pub async fn intervals(&self, services: &Services) -> CoreResult<Vec<(i64, String, i64, Option<i64>)>> {
        let mut out = Vec::new();
        for chunk in self.intervals.chunks(MAX_BRANCHES) {
            let (sql, binds) = union(chunk, "u, s, e");
            match services.db() {
                // One row per read, its intervals packed; an open one ends in ''.
                Db::Sqlite(pool) => {
                    let sql = format!(
                        "select tag, {} from ({sql}) as u group by tag",
                        packed("u", "s", "ifnull(e, '')")
                    );
                    let cond = Cond { sql, binds };
                    let rows: Vec<(i64, String)> = bind_cond!(sqlx::query_as(&cond.sql), cond).fetch_all(pool).await?;
                    for (tag, intervals) in rows {
                        for [user, start, end] in unpack(&intervals) {
                            let start = start.parse().unwrap_or_default();
                            out.push((tag, user.to_string(), start, end.parse().ok()));
                        }
                    }
                }
                Db::Postgres(pool) => {
                    let cond = Cond { sql, binds };
                    let rows: Vec<(i64, String, i64, Option<i64>)> =
                        bind_cond!(sqlx::query_as(&cond.sql), cond).fetch_all(pool).await?;
                    out.extend(rows);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_renumbered_after_the_earlier_branches() {
        assert_eq!(renumber("a = $1 and b in ($2, $10)", 3), "a = $4 and b in ($5, $13)");
        assert_eq!(renumber("no placeholders, $ alone", 5), "no placeholders, $ alone");
    }

    #[test]
    fn a_union_tags_rows_and_concatenates_binds() {
        let branch = |tag, sql: &str, n| Branch {
            tag,
            sql: sql.to_string(),
            binds: (0..n).map(Bind::Int).collect(),
        };
        let (sql, binds) = union(
            &[branch(4, "select $1 as x", 1), branch(7, "select $1 + $2 as x", 2)],
            "x",
        );
        assert_eq!(
            sql,
            "select cast(4 as bigint) as tag, x from (select $1 as x) as r0 union all \
             select cast(7 as bigint) as tag, x from (select $2 + $3 as x) as r1"
        );
        assert_eq!(binds.len(), 3);
    }
}
