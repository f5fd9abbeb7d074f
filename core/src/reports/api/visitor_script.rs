//! The shapes of the reports the visitor script feeds (spec 2.16): page
//! resources and script errors, their filters and their rows.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Criteria, DateFilter, TagsFilter};

/// `groupBy` of the resource report (spec 2.16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ResourceGroupBy {
    /// By resource name.
    ResourceName,
    /// By session.
    SessionId,
    /// By visit.
    VisitId,
    /// By visitor.
    VisitorId,
    /// By external id.
    ExternalId,
    /// By resource type (`script`, `img`, `css`, `fetch`, …).
    Type,
    /// By page path.
    Path,
    /// By page URL.
    Url,
    /// By HTTP status code.
    StatusCode,
}

/// Filters of the conversation-resource report (spec 2.16).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResourceFilter {
    /// Exact resource name.
    pub resource_name: Option<String>,
    /// Exact session id.
    pub session_id: Option<String>,
    /// Exact visit id.
    pub visit_id: Option<String>,
    /// Any of these visitors (unique).
    pub visitor_ids: Option<Vec<String>>,
    /// Any of these external ids (unique).
    pub external_ids: Option<Vec<String>>,
    /// Exact HTTP status code.
    pub status_code: Option<i32>,
    /// Exact resource type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Tag filter on the visit's tags.
    pub tags: Option<TagsFilter>,
    /// Period (and time zone for the buckets of the totals).
    #[serde(default)]
    pub date_filter: DateFilter,
    /// Exact page path.
    pub path: Option<String>,
    /// Page URL prefix.
    pub url: Option<String>,
    /// One more condition on any field.
    pub criteria: Option<Criteria>,
    /// Group rows by this; resources with the same name in a group are averaged.
    pub group_by: Option<ResourceGroupBy>,
}

/// One row of the resource report: a resource, or with `groupBy` the average of
/// the resources of that name in the group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResourceRow {
    /// The group's value (with `groupBy`).
    pub group: Option<String>,
    /// Resource name.
    pub resource_name: String,
    /// Resource type.
    #[serde(rename = "type")]
    pub kind: String,
    /// How many loads are in this row.
    pub count: i64,
    /// Mean load time, ms.
    pub avg_duration_ms: f64,
    /// Longest load time, ms.
    pub max_duration_ms: i64,
    /// Mean transferred bytes, where known.
    pub avg_transfer_bytes: Option<f64>,
    /// Loads that answered 400 or above.
    pub error_count: i64,
}

/// The resource report: rows (at most 1000, most loads first) and the per-bucket
/// totals for charts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ResourceReport {
    /// Averaged rows.
    pub rows: Vec<ResourceRow>,
    /// Bucket label → `RESOURCE_LOADS`, `AVG_RESOURCE_DURATION` (ms), `RESOURCE_ERRORS`.
    pub results: BTreeMap<String, BTreeMap<String, String>>,
}

/// Filters of the script-error report (spec 2.16, second set).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScriptErrorFilter {
    /// Exact session id.
    pub session_id: Option<String>,
    /// Any of these visitors (unique).
    pub visitor_ids: Option<Vec<String>>,
    /// Any of these external ids (unique).
    pub external_ids: Option<Vec<String>>,
    /// Period.
    #[serde(default)]
    pub date_filter: DateFilter,
    /// Tag filter on the visit's tags.
    pub tags: Option<TagsFilter>,
    /// Exact page path.
    pub path: Option<String>,
    /// Page URL prefix.
    pub url: Option<String>,
    /// Exact script file name.
    pub file_name: Option<String>,
    /// One more condition on any field.
    pub criteria: Option<Criteria>,
}

/// One distinct script error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScriptErrorRow {
    /// The error message.
    pub message: String,
    /// The script.
    pub file_name: Option<String>,
    /// Line in the script.
    pub line: Option<i32>,
    /// How often it happened.
    pub count: i64,
    /// How many visitors it hit.
    pub visitors: i64,
    /// First occurrence in the period.
    pub first_seen: DateTime<Utc>,
    /// Last occurrence in the period.
    pub last_seen: DateTime<Utc>,
    /// A stack trace of the error, from one of its occurrences that has one.
    #[serde(default)]
    pub stack: Option<String>,
}

/// The script-error report: distinct errors (at most 1000, most frequent first) and
/// per-bucket counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct ScriptErrorReport {
    /// Distinct errors.
    pub errors: Vec<ScriptErrorRow>,
    /// Bucket label → `SCRIPT_ERRORS`, `AFFECTED_VISITORS`.
    pub results: BTreeMap<String, BTreeMap<String, String>>,
}
