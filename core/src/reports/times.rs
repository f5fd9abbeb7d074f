//! Agent time lists (spec 4.1 "agent times list" and its ranged forms) and agent
//! metrics split by conversation.

use std::collections::{BTreeMap, HashSet};

use super::{
    api::{AgentConversationReport, AgentTimes, DateFilter, Grouping, MetricEntry, ReportRequest, TimeRange},
    catalogue::{MetricDef, Report, Source},
    cells::{cell, Grid},
    plan::{plan, Filter},
    query::Strategy,
    reads::Reads,
    window::MAX_CUSTOM_SPAN,
    zones::Period,
};
use crate::{
    error::CoreResult,
    ids::{TenantId, UserId},
    time::from_ms,
    time::now_ms,
    Services,
};

/// Which presence state a time list reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimesKind {
    /// `ONLINE` intervals.
    Online,
    /// `LOGGED_IN` intervals.
    LoggedIn,
}

impl TimesKind {
    fn state(self) -> &'static str {
        match self {
            TimesKind::Online => "ONLINE",
            TimesKind::LoggedIn => "LOGGED_IN",
        }
    }
}

/// The metrics of the per-agent conversation split, in output order.
const CONVERSATION_SPLIT: [&str; 6] = [
    "CONVERSATIONS",
    "CONVERSATIONS_ANSWERED",
    "CONVERSATIONS_DONE",
    "FIRST_RESPONSE_TIME",
    "RESPONSE_TIME",
    "MESSAGES_OUT",
];

/// A date filter from the ranged forms' parameters: `from`/`to` make it `CUSTOM`.
/// One edge alone is completed so that the range is valid: a lone `to` starts
/// five years earlier (or at 0), a lone `from` ends now, five years later, or a
/// day after it, whichever comes first and still follows it.
pub fn ranged_filter(grouping: Option<Grouping>, from: Option<i64>, to: Option<i64>, tz: Option<String>) -> DateFilter {
    const DAY: i64 = 24 * 60 * 60 * 1000;
    let (grouping, from, to) = match (from, to) {
        (None, None) => (grouping.unwrap_or_default(), None, None),
        (Some(from), Some(to)) => (Grouping::Custom, Some(from), Some(to)),
        (None, Some(to)) => (
            Grouping::Custom,
            Some(to.saturating_sub(MAX_CUSTOM_SPAN).max(0)),
            Some(to),
        ),
        (Some(from), None) => {
            let end = from
                .saturating_add(MAX_CUSTOM_SPAN)
                .min(now_ms().max(from.saturating_add(DAY)));
            (Grouping::Custom, Some(from), Some(end))
        }
    };
    DateFilter {
        grouping,
        from,
        to,
        time_zone: tz,
    }
}

impl Services {
    /// Per agent, the intervals of `kind` in the period (clipped to it; an open one
    /// ends now) and their total in whole minutes. Agents without time are absent.
    pub async fn agent_times(
        &self,
        tenant_id: &TenantId,
        kind: TimesKind,
        filter: &DateFilter,
    ) -> CoreResult<Vec<AgentTimes>> {
        let source = Source::Presence(kind.state());
        let period = Period {
            filter,
            sources: &[source],
            field: "",
        };
        let by_user = self
            .in_window(tenant_id, period, true, |window| async move {
                let now = now_ms();
                let mut reads = Reads::default();
                let period = (window.start, window.end);
                reads.raw(
                    0,
                    tenant_id,
                    &window,
                    source,
                    "AGENT",
                    &Filter::default(),
                    period,
                    false,
                );
                let mut by_user: BTreeMap<UserId, Vec<(i64, i64)>> = BTreeMap::new();
                for (user, start, end) in reads.intervals(self).await? {
                    let (s, e) = (start.max(window.start), end.unwrap_or(now).min(window.end));
                    if s < e {
                        by_user.entry(user).or_default().push((s, e));
                    }
                }
                Ok(by_user)
            })
            .await?;
        Ok(by_user
            .into_iter()
            .map(|(user_id, mut ranges)| {
                ranges.sort_unstable();
                let total: i64 = ranges.iter().map(|(s, e)| e - s).sum();
                AgentTimes {
                    user_id,
                    time_ranges: ranges
                        .into_iter()
                        .map(|(s, e)| TimeRange {
                            start: from_ms(s),
                            end: from_ms(e),
                        })
                        .collect(),
                    sum_minutes: total / 60_000,
                }
            })
            .collect())
    }

    /// Per bucket and agent, the conversation metrics of the chat report.
    /// `strategy` is [`Strategy::Rollups`] except in tests and the benchmark.
    pub async fn agent_conversation_split(
        &self,
        tenant_id: &TenantId,
        filter: &DateFilter,
        strategy: Strategy,
    ) -> CoreResult<AgentConversationReport> {
        // One plan per metric, cut into one window, so that each bucket label is
        // formatted once and every cell goes straight into the answer. Every
        // metric here is grouped by agent without filters, so one read of the
        // day rows serves all of their sources (two metrics share one).
        let mut queries = Vec::new();
        for metric in CONVERSATION_SPLIT {
            let report = if metric == "MESSAGES_OUT" {
                Report::Message
            } else {
                Report::Chat
            };
            let request = ReportRequest {
                metrics: vec![MetricEntry {
                    metric_name: metric.to_string(),
                    group_by: Some("AGENT".into()),
                    ..Default::default()
                }],
                date_filter: filter.clone(),
            };
            queries.extend(plan(report, &request)?);
        }
        let mut sources: Vec<Source> = Vec::new();
        for source in queries.iter().flat_map(|q| q.def.measure.sources()) {
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
        let sources = &sources;
        let period = Period {
            filter,
            sources,
            field: "dateFilter.",
        };
        let (window, grids) = self
            .in_window(tenant_id, period, true, |window| async move {
                let grids = self
                    .source_grids(tenant_id, &window, sources, "AGENT", &Filter::default(), strategy)
                    .await?;
                Ok((window, grids))
            })
            .await?;
        let labels = window.labels();
        // One pass over the (bucket, agent) keys that have any fact, computing
        // each metric the key has facts for: every key is cloned and looked up
        // in the labelled answer once, not once per metric.
        let metrics: Vec<(&MetricDef, Vec<&Grid>)> = queries
            .iter()
            .map(|query| {
                debug_assert!(query.group_kind == "AGENT" && query.filter.is_empty());
                let parts = query
                    .def
                    .measure
                    .sources()
                    .iter()
                    .filter_map(|s| sources.iter().position(|x| x == s).map(|i| &grids[i]))
                    .collect();
                (query.def, parts)
            })
            .collect();
        let keys: HashSet<&(i64, String), rustc_hash::FxBuildHasher> = grids
            .iter()
            .flat_map(|grid| grid.keys())
            .filter(|(b, _)| labels.contains(*b))
            .collect();
        let mut buckets: Vec<BTreeMap<String, BTreeMap<String, String>>> = vec![BTreeMap::new(); labels.len()];
        for key in keys {
            let values: BTreeMap<String, String> = metrics
                .iter()
                .filter(|(_, parts)| parts.iter().any(|grid| grid.contains_key(key)))
                .filter_map(|(def, parts)| cell(def, parts, key).map(|value| (def.name.to_string(), value)))
                .collect();
            if let Some(i) = labels.index(key.0) {
                if !values.is_empty() {
                    buckets[i].insert(key.1.clone(), values);
                }
            }
        }
        let out = AgentConversationReport {
            results: labels.keyed(buckets),
        };
        Ok(out)
    }
}
