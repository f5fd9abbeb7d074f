//! Report requests and responses on the wire (spec 2.15–2.17). These types are
//! shared with the browser dashboard, so they stay free of storage.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::UserId;

mod visitor_script;

pub use visitor_script::{
    ResourceFilter, ResourceGroupBy, ResourceReport, ResourceRow, ScriptErrorFilter, ScriptErrorReport, ScriptErrorRow,
};

/// The spec's `grouping` enum: which period a report covers and how it is cut
/// into buckets. Bucket sizes (all cut in the report's time zone):
///
/// | grouping | period | bucket | label |
/// |---|---|---|---|
/// | `TODAY` | local midnight to now | hour | `YYYY/MM/DD HH` |
/// | `TODAY_BY_MINUTE` | local midnight to now | minute | `YYYY/MM/DD HH:mm` |
/// | `LAST_7_DAYS` | today and the 6 days before | day | `YYYY/MM/DD` |
/// | `LAST_MONTH` | the day after this date last month, to now | day | `YYYY/MM/DD` |
/// | `LAST_YEAR` | the day after this date last year, to now | day | `YYYY/MM/DD` |
/// | `CUSTOM` | `from` to `to` | hour up to 48 h, else day | as above |
/// | `ALL` | the first recorded fact to now | day | `YYYY/MM/DD` |
///
/// On the night clocks go back, the repeated hour is one bucket two hours long; on
/// the night they go forward, the skipped hour has no bucket. Days are as long as
/// they really are (23, 24 or 25 hours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Grouping {
    /// Today, by hour.
    Today,
    /// Today, by minute.
    TodayByMinute,
    /// The last seven days including today, by day.
    #[default]
    #[serde(rename = "LAST_7_DAYS")]
    Last7Days,
    /// The last month up to today, by day.
    LastMonth,
    /// The last year up to today, by day.
    LastYear,
    /// `from` to `to`, by hour when at most 48 hours long, else by day.
    Custom,
    /// Everything recorded, by day.
    All,
}

impl Grouping {
    /// Every value, in documentation order.
    pub const ALL: [Grouping; 7] = [
        Grouping::Today,
        Grouping::TodayByMinute,
        Grouping::Last7Days,
        Grouping::LastMonth,
        Grouping::LastYear,
        Grouping::Custom,
        Grouping::All,
    ];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Grouping::Today => "TODAY",
            Grouping::TodayByMinute => "TODAY_BY_MINUTE",
            Grouping::Last7Days => "LAST_7_DAYS",
            Grouping::LastMonth => "LAST_MONTH",
            Grouping::LastYear => "LAST_YEAR",
            Grouping::Custom => "CUSTOM",
            Grouping::All => "ALL",
        }
    }
}

/// The last millisecond a report range may name: 9999-12-31T23:59:59.999Z.
pub const MAX_TIME_MS: i64 = 253_402_300_799_999;

/// The spec's `DateFilterAPIDTO`: a grouping, and for `CUSTOM` the range.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DateFilter {
    /// The period and bucket size (default `LAST_7_DAYS`).
    #[serde(default)]
    pub grouping: Grouping,
    /// Start of a `CUSTOM` range, unix milliseconds (inclusive).
    pub from: Option<i64>,
    /// End of a `CUSTOM` range, unix milliseconds (exclusive): after `from`
    /// (else 422 `before_start`) and at most five years later (else 422
    /// `range_too_long`).
    pub to: Option<i64>,
    /// IANA time zone to cut buckets in; default the tenant's.
    #[cfg_attr(feature = "server", schema(example = "Europe/Berlin"))]
    pub time_zone: Option<String>,
}

impl DateFilter {
    /// `CUSTOM` needs `from` and `to` (`from` at least 0; `to` after `from`, at most
    /// five years later), as a JSON Schema condition. It also serves
    /// [`AgentTimesRequest`], which has the same fields.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{
            "if": {"required": ["grouping"], "properties": {"grouping": {"const": "CUSTOM"}}},
            "then": {"required": ["from", "to"], "properties": {
                "from": {"type": "integer", "minimum": 0, "maximum": MAX_TIME_MS},
                "to": {"type": "integer", "minimum": 1, "maximum": MAX_TIME_MS},
            }},
        }])
    }
}

/// Tags filter (the spec's `BooleanArrayFilterString`): an item matches when it
/// carries every tag of `all`, at least one of `any` (if given) and none of `none`.
/// A plain array is read as `all`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(from = "TagsFilterWire")]
pub struct TagsFilter {
    /// Every one of these tags.
    #[serde(default)]
    pub all: Vec<String>,
    /// At least one of these tags (when not empty).
    #[serde(default)]
    pub any: Vec<String>,
    /// None of these tags.
    #[serde(default)]
    pub none: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TagsFilterWire {
    List(Vec<String>),
    Object {
        #[serde(default)]
        all: Vec<String>,
        #[serde(default)]
        any: Vec<String>,
        #[serde(default)]
        none: Vec<String>,
    },
}

impl From<TagsFilterWire> for TagsFilter {
    fn from(wire: TagsFilterWire) -> Self {
        match wire {
            TagsFilterWire::List(all) => TagsFilter {
                all,
                ..Default::default()
            },
            TagsFilterWire::Object { all, any, none } => TagsFilter { all, any, none },
        }
    }
}

impl TagsFilter {
    /// True when the filter lets everything through.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty() && self.any.is_empty() && self.none.is_empty()
    }
}

/// One metric of a report request (spec 2.15). Which fields apply depends on the
/// report; the others must be absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MetricEntry {
    /// The metric (see `GET /rest/v1/report/metrics`).
    pub metric_name: String,
    /// Split each bucket by this dimension instead of naming the metric. With a
    /// `groupBy`, a request carries exactly one metric (spec 8). `AGENT` keys
    /// buckets by user id, `AGENT_EMAIL` by the agent's e-mail address.
    pub group_by: Option<String>,
    /// Co-browse and visit reports: tag filter. A co-browse on a site with the
    /// script carries the tags of the visitor's recorded session as it ended;
    /// a universal co-browsing session carries none.
    pub tags: Option<TagsFilter>,
    /// Visit reports: only these visitors (unique, at most 200).
    #[cfg_attr(feature = "server", schema(max_items = 200))]
    pub visitor_ids: Option<Vec<String>>,
    /// Visit reports: only visitors with these external ids (unique, at most 200).
    #[cfg_attr(feature = "server", schema(max_items = 200))]
    pub external_ids: Option<Vec<String>>,
    /// Visit reports: visits whose URL starts with this (an http(s) URL).
    #[cfg_attr(feature = "server", schema(format = "uri"))]
    pub base_url: Option<String>,
    /// Rule report: only these rules (unique, at most 200).
    #[cfg_attr(feature = "server", schema(max_items = 200))]
    pub rule_ids: Option<Vec<String>>,
}

/// The common report request (spec 2.15).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "server", schema(example = json!({
    "metrics": [{"metricName": "ONLINE_TIME", "groupBy": "AGENT"}],
    "dateFilter": {"grouping": "LAST_7_DAYS"}
})))]
pub struct ReportRequest {
    /// What to measure (1–20 metrics; exactly one when it has a `groupBy`).
    #[serde(default)]
    #[cfg_attr(feature = "server", schema(required = true, min_items = 1, max_items = 20))]
    pub metrics: Vec<MetricEntry>,
    /// Period, buckets and time zone.
    #[serde(default)]
    pub date_filter: DateFilter,
}

/// The aggregation response (spec 2.17): bucket label, then agent id / group key /
/// metric name, then the value as a string.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({
    "results": {"2026/11/20": {"ONLINE_TIME": "28800"}, "2026/11/21": {"ONLINE_TIME": "3600"}}
})))]
pub struct AggregationResponse {
    /// Buckets in time order; every bucket of the period is present.
    pub results: BTreeMap<String, BTreeMap<String, String>>,
}

/// Body of the agent times list (`{grouping}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentTimesRequest {
    /// The period (default `LAST_7_DAYS`).
    #[serde(default)]
    pub grouping: Grouping,
    /// Start of a `CUSTOM` range, unix milliseconds.
    pub from: Option<i64>,
    /// End of a `CUSTOM` range, unix milliseconds.
    pub to: Option<i64>,
    /// IANA time zone for the period's edges; default the tenant's.
    #[cfg_attr(feature = "server", schema(example = "Europe/Berlin"))]
    pub time_zone: Option<String>,
}

/// One interval of an agent times record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct TimeRange {
    /// Start (clipped to the period).
    pub start: DateTime<Utc>,
    /// End (clipped to the period; now for an interval still open).
    pub end: DateTime<Utc>,
}

/// An agent times record (spec 2.17).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentTimes {
    /// The agent's user id.
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub user_id: UserId,
    /// The intervals, oldest first.
    pub time_ranges: Vec<TimeRange>,
    /// Their total length in whole minutes (rounded down).
    pub sum_minutes: i64,
}

/// Agent metrics split by conversation: per bucket and agent, the conversation
/// metrics of that agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct AgentConversationReport {
    /// Bucket label, then agent id, then metric name, then the value as a string.
    pub results: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>,
}

/// The spec's `criteria`: a condition on one field. `criteriaObject.empty: true`
/// matches items where the field is missing; `false` where it is present. Further
/// properties compare: `eq`, `ne`, `gt`, `gte`, `lt`, `lte` (numbers or strings) and
/// `contains` (strings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Criteria {
    /// The field: for resources `name`, `type`, `url`, `path`, `statusCode`,
    /// `durationMs`, `transferBytes`, `sessionId`, `visitId`, `visitorId`,
    /// `externalId`; for script errors `message`, `fileName`, `line`, `url`, `path`,
    /// `sessionId`, `visitId`, `visitorId`, `externalId`.
    pub key: String,
    /// The condition.
    #[serde(default)]
    pub criteria_object: serde_json::Map<String, serde_json::Value>,
}

/// One entry of the metric catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MetricInfo {
    /// The report operation, e.g. `agent` for `POST /rest/v1/report/agent`.
    pub report: String,
    /// The `metricName`.
    pub metric_name: String,
    /// `seconds`, `minutes`, `count`, `percent` or `rating` (a mean of 1–5 ratings).
    pub unit: String,
    /// The `groupBy` values this metric takes.
    pub group_by: Vec<String>,
    /// What it measures.
    pub description: String,
}

/// A metric's value over a whole period and over the period of the same length
/// just before it (dashboards' summary rows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricTotal {
    /// The `metricName`.
    pub metric_name: String,
    /// The value over the period, formatted as in reports; `None` when undefined
    /// (an average without samples).
    pub current: Option<String>,
    /// The same over the previous period.
    pub previous: Option<String>,
}

/// What an agent shows in the top bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PresenceStatus {
    /// Taking conversations.
    Online,
    /// Signed in, on a break.
    Away,
    /// Signed in, not taking conversations.
    Offline,
}

impl PresenceStatus {
    /// Every status, in the order the top bar shows them.
    pub const ALL: [PresenceStatus; 3] = [PresenceStatus::Online, PresenceStatus::Away, PresenceStatus::Offline];

    /// The wire name (`ONLINE`, `AWAY`, `OFFLINE`).
    pub fn as_str(self) -> &'static str {
        match self {
            PresenceStatus::Online => "ONLINE",
            PresenceStatus::Away => "AWAY",
            PresenceStatus::Offline => "OFFLINE",
        }
    }

    /// How the dashboard names it.
    pub fn label(self) -> &'static str {
        match self {
            PresenceStatus::Online => "Online",
            PresenceStatus::Away => "Away",
            PresenceStatus::Offline => "Offline",
        }
    }
}
