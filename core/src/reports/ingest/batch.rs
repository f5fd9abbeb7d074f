//! What the visitor script sends: a batch of events, each kind's fields, and
//! what the batch came to.

use serde::{Deserialize, Serialize};

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
