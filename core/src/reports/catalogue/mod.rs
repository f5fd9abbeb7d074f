//! The metric catalogue: every `metricName` of every report, what it is computed
//! from, its unit and the `groupBy` values it takes. The REST layer lists it at
//! `GET /rest/v1/report/metrics`, and the engine ([`super::query`]) reads nothing
//! else to know how to answer.
//!
//! This module holds the types; `metrics.rs` is the table itself.

mod metrics;

pub use metrics::METRICS;

use super::api::MetricInfo;

/// A report operation of spec 4.1/4.2 that answers with the aggregation shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Report {
    /// `POST /report/agent`: presence times.
    Agent,
    /// `POST /report/chat`: conversations and response times.
    Chat,
    /// `POST /report/message`: messages by direction and type.
    Message,
    /// `POST /report/session`: recorded sessions.
    Session,
    /// `POST /report/session/reason`: sessions by why they were recorded.
    SessionReason,
    /// `POST /report/visit`: website visits.
    Visit,
    /// `POST /report/visit/pages`: the same metrics, by entry page.
    VisitPages,
    /// `POST /report/cobrowse`: co-browsing started from the visitor script.
    Cobrowse,
    /// `POST /report/cobrowse/universal`: universal co-browsing (generated links).
    CobrowseUniversal,
    /// `POST /report/conference`: video conferences.
    Conference,
    /// `POST /report/rule/`: rule matches and SLA outcomes.
    Rule,
}

impl Report {
    /// Every report, in documentation order.
    pub const ALL: [Report; 11] = [
        Report::Agent,
        Report::Chat,
        Report::Message,
        Report::Session,
        Report::SessionReason,
        Report::Visit,
        Report::VisitPages,
        Report::Cobrowse,
        Report::CobrowseUniversal,
        Report::Conference,
        Report::Rule,
    ];

    /// The path under `/rest/v1/report/`.
    pub fn path(self) -> &'static str {
        match self {
            Report::Agent => "agent",
            Report::Chat => "chat",
            Report::Message => "message",
            Report::Session => "session",
            Report::SessionReason => "session/reason",
            Report::Visit => "visit",
            Report::VisitPages => "visit/pages",
            Report::Cobrowse => "cobrowse",
            Report::CobrowseUniversal => "cobrowse/universal",
            Report::Conference => "conference",
            Report::Rule => "rule",
        }
    }

    /// The `groupBy` applied when a request names none (`None`: keyed by metric).
    pub fn default_group_by(self) -> Option<&'static str> {
        match self {
            Report::SessionReason => Some("REASON"),
            Report::VisitPages => Some("PAGE"),
            _ => None,
        }
    }

    /// Which filter fields of a metric entry this report takes.
    pub fn filters(self) -> Filters {
        match self {
            Report::Cobrowse | Report::CobrowseUniversal => Filters::Tags,
            Report::Visit | Report::VisitPages => Filters::Visit,
            Report::Rule => Filters::Rules,
            _ => Filters::None,
        }
    }
}

/// The filter fields a report's metric entries accept (spec 2.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filters {
    /// `metricName`, `groupBy` only.
    None,
    /// Plus `tags`.
    Tags,
    /// Plus `tags`, `visitorIds`, `externalIds`, `baseUrl`.
    Visit,
    /// Plus `ruleIds`.
    Rules,
}

/// Where a measure's facts live. Each source has a raw table and rollup rows under
/// the same kind name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// Presence intervals of a state (`LOGGED_IN`, `ONLINE`, `AWAY`); rollup kind
    /// `PRESENCE_<state>`, total in ms.
    Presence(&'static str),
    /// `report_facts` rows of a kind; rollup under the same kind.
    Fact(&'static str),
    /// `visits` rows: rollup kind `VISIT`, total = duration ms.
    Visits,
    /// `visits` rows: rollup kind `PAGE_VIEW`, total = page views.
    PageViews,
}

impl Source {
    /// The rollup `kind` of this source.
    pub fn rollup_kind(self) -> String {
        match self {
            Source::Presence(state) => format!("PRESENCE_{state}"),
            Source::Fact(kind) => kind.to_string(),
            Source::Visits => "VISIT".to_string(),
            Source::PageViews => "PAGE_VIEW".to_string(),
        }
    }
}

/// How a metric turns sums into its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Sum of the values (durations, page views), over these sources.
    Sum(&'static [Source]),
    /// Number of facts, over these sources.
    Count(&'static [Source]),
    /// Sum of values divided by the number of facts.
    Average(Source),
    /// Number of distinct visitors.
    DistinctVisitors,
    /// `100 × (matched − missed) / matched`.
    HitRate {
        /// Facts that started a measurement.
        matched: &'static [Source],
        /// Facts where the target was missed.
        missed: &'static [Source],
    },
}

impl Measure {
    /// Every source the measure reads.
    pub fn sources(self) -> Vec<Source> {
        match self {
            Measure::Sum(s) | Measure::Count(s) => s.to_vec(),
            Measure::Average(s) => vec![s],
            Measure::DistinctVisitors => vec![Source::Visits],
            Measure::HitRate { matched, missed } => matched.iter().chain(missed).copied().collect(),
        }
    }
}

/// The unit a value is given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Whole seconds for sums; seconds with up to two decimals for averages.
    Seconds,
    /// Minutes, up to two decimals.
    Minutes,
    /// A whole number.
    Count,
    /// Percent, up to two decimals.
    Percent,
    /// A mean of 1–5 ratings, up to two decimals.
    Rating,
}

impl Unit {
    /// The catalogue's name for the unit.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Seconds => "seconds",
            Unit::Minutes => "minutes",
            Unit::Count => "count",
            Unit::Percent => "percent",
            Unit::Rating => "rating",
        }
    }
}

/// A dimension a metric can be split by, and which rollup group holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupBy {
    /// The `groupBy` value on the wire.
    pub name: &'static str,
    /// The rollup group: `AGENT` (the fact's agent) or `DIM` (its second dimension).
    pub group_kind: &'static str,
}

/// One metric of one report.
#[derive(Debug, Clone, Copy)]
pub struct MetricDef {
    /// The report it belongs to.
    pub report: Report,
    /// The `metricName`.
    pub name: &'static str,
    /// How it is computed.
    pub measure: Measure,
    /// The unit of its values.
    pub unit: Unit,
    /// The `groupBy` values it takes.
    pub group_by: &'static [GroupBy],
    /// What it measures.
    pub description: &'static str,
}

// Fact kinds written by the services (see `super::facts`).
/// A conversation started: a customer was created or a `DONE` one reopened.
pub const CONVERSATION_NEW: &str = "CONVERSATION_NEW";
/// A conversation was set to `DONE`.
pub const CONVERSATION_DONE: &str = "CONVERSATION_DONE";
/// A conversation changed status; `dim` is the new status.
pub const STATUS_CHANGE: &str = "STATUS_CHANGE";
/// A message from a customer; `dim` is its type.
pub const MESSAGE_IN: &str = "MESSAGE_IN";
/// A message to a customer; `dim` is its type.
pub const MESSAGE_OUT: &str = "MESSAGE_OUT";
/// The first agent reply of a conversation; value = ms since it started.
pub const FIRST_RESPONSE: &str = "FIRST_RESPONSE";
/// An agent reply to waiting customer messages; value = ms since the oldest.
pub const RESPONSE: &str = "RESPONSE";
/// A visitor rated a closed conversation; value = the rating (1–5), agent =
/// the assignee at the closing.
pub const CSAT: &str = "CSAT";
/// A message was sent from a text block; `dim` is the block's id, agent the sender.
pub const TEXT_BLOCK_USED: &str = "TEXT_BLOCK_USED";
/// A routing rule matched; `dim` is the rule id.
pub const ROUTING_RULE_MATCH: &str = "ROUTING_RULE_MATCH";
/// An action rule matched; `dim` is the rule id.
pub const ACTION_RULE_MATCH: &str = "ACTION_RULE_MATCH";
/// An SLA rule's first-response trigger started; `dim` is the rule id.
pub const SLA_1_MATCH: &str = "SLA_1_MATCH";
/// An SLA rule's second-response trigger started.
pub const SLA_2_MATCH: &str = "SLA_2_MATCH";
/// An SLA rule's first-response target was missed.
pub const SLA_1_MISS: &str = "SLA_1_MISS";
/// An SLA rule's second-response target was missed.
pub const SLA_2_MISS: &str = "SLA_2_MISS";
/// A recorded session ended; value = its length in ms, `dim` its reason.
pub const SESSION: &str = "SESSION";
/// A co-browse session (visitor script) ended; value = ms, agent = host.
pub const COBROWSE: &str = "COBROWSE";
/// Participants of a script co-browse session; value = how many.
pub const COBROWSE_PARTICIPANTS: &str = "COBROWSE_PARTICIPANTS";
/// A universal co-browse session ended; value = ms, agent = host.
pub const COBROWSE_UNIVERSAL: &str = "COBROWSE_UNIVERSAL";
/// Participants of a universal co-browse session.
pub const COBROWSE_UNIVERSAL_PARTICIPANTS: &str = "COBROWSE_UNIVERSAL_PARTICIPANTS";
/// Control of a script co-browse was handed to the agent; value = 1, agent = host.
pub const COBROWSE_HANDOVER: &str = "COBROWSE_HANDOVER";
/// Control of a universal co-browse was handed over; value = 1, agent = host.
pub const COBROWSE_UNIVERSAL_HANDOVER: &str = "COBROWSE_UNIVERSAL_HANDOVER";
/// A conference ended; value = ms, agent = host.
pub const CONFERENCE: &str = "CONFERENCE";
/// Participants of a conference.
pub const CONFERENCE_PARTICIPANTS: &str = "CONFERENCE_PARTICIPANTS";
/// A recording of a conference was stored; value = ms recorded, agent = host.
pub const CONFERENCE_RECORDING: &str = "CONFERENCE_RECORDING";

/// The metric `name` of `report`, if it exists.
pub fn find(report: Report, name: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|m| m.report == report && m.name == name)
}

/// The catalogue as listed by the API.
pub fn catalogue() -> Vec<MetricInfo> {
    METRICS
        .iter()
        .map(|m| MetricInfo {
            report: m.report.path().to_string(),
            metric_name: m.name.to_string(),
            unit: m.unit.as_str().to_string(),
            group_by: m.group_by.iter().map(|g| g.name.to_string()).collect(),
            description: m.description.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_per_report_and_include_the_spec_names() {
        for (i, a) in METRICS.iter().enumerate() {
            for b in &METRICS[i + 1..] {
                assert!(!(a.report == b.report && a.name == b.name), "{} twice", a.name);
            }
        }
        for name in ["ONLINE_TIME", "LOGGED_IN_TIME"] {
            assert!(find(Report::Agent, name).is_some());
        }
        for name in [
            "ACTION_RULE_MATCH_COUNT",
            "ROUTING_RULE_MATCH_COUNT",
            "SLA_1_RULE_MATCH_COUNT",
            "SLA_2_RULE_MATCH_COUNT",
            "SLA_1_RULE_MISS_COUNT",
            "SLA_2_RULE_MISS_COUNT",
        ] {
            assert!(find(Report::Rule, name).is_some());
        }
        assert!(find(Report::Agent, "ONLINE_TIME")
            .unwrap()
            .group_by
            .contains(&metrics::AGENT));
    }

    #[test]
    fn default_group_by_is_offered_by_every_metric_of_the_report() {
        for m in METRICS {
            if let Some(default) = m.report.default_group_by() {
                assert!(m.group_by.iter().any(|g| g.name == default), "{}", m.name);
            }
        }
    }
}
