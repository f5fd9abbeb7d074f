//! `/report`: every report operation of spec 4.1/4.2, the metric catalogue, and
//! CSV downloads (`?format=csv` on any report).

use axum::{
    extract::State,
    http::header,
    response::{IntoResponse, Response},
    Json,
};
use rapport_core::reports::{
    api::{
        AgentConversationReport, AgentTimes, AgentTimesRequest, AggregationResponse, DateFilter, Grouping, MetricInfo,
        ReportRequest, ResourceFilter, ResourceReport, ScriptErrorFilter, ScriptErrorReport,
    },
    catalogue::{self, Report},
    csv,
    query::Strategy,
    times::{ranged_filter, TimesKind},
};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, InputErrors},
        extract::{ApiJson, ApiQuery, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(metrics))
        .routes(routes!(times_online))
        .routes(routes!(times_logged_in))
        .routes(routes!(times_online_range))
        .routes(routes!(times_logged_in_range))
        .routes(routes!(agent_conversations))
        .routes(routes!(agent))
        .routes(routes!(chat))
        .routes(routes!(message))
        .routes(routes!(session))
        .routes(routes!(session_reason))
        .routes(routes!(visit))
        .routes(routes!(visit_pages))
        .routes(routes!(cobrowse))
        .routes(routes!(cobrowse_universal))
        .routes(routes!(conference))
        .routes(routes!(rule))
        .routes(routes!(rule_no_slash))
        .routes(routes!(resources))
        .routes(routes!(script_errors))
}

/// `?format=csv` turns any report into a CSV download.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct Format {
    /// `json` (default) or `csv` (a `text/csv` download); other values answer JSON.
    #[param(example = "csv")]
    format: Option<String>,
}

/// A report as JSON, or as a CSV attachment.
enum Reply<T> {
    Json(T),
    Csv(&'static str, String),
}

impl<T> Reply<T> {
    fn new(format: &Format, name: &'static str, body: T, to_csv: impl FnOnce(&T) -> String) -> Reply<T> {
        if format.format.as_deref().is_some_and(|f| f.eq_ignore_ascii_case("csv")) {
            Reply::Csv(name, to_csv(&body))
        } else {
            Reply::Json(body)
        }
    }
}

impl<T: serde::Serialize> IntoResponse for Reply<T> {
    fn into_response(self) -> Response {
        match self {
            Reply::Json(body) => Json(body).into_response(),
            Reply::Csv(name, body) => (
                [
                    (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("attachment; filename=\"rapport-{name}.csv\""),
                    ),
                ],
                body,
            )
                .into_response(),
        }
    }
}

/// Every report's metrics: `metricName`, unit and `groupBy` values.
#[utoipa::path(get, path = "/report/metrics", tag = "report",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Vec<MetricInfo>), AuthErrors))]
async fn metrics(_auth: TenantAuth) -> Json<Vec<MetricInfo>> {
    Json(catalogue::catalogue())
}

async fn times(
    state: &AppState,
    auth: &TenantAuth,
    kind: TimesKind,
    filter: DateFilter,
    format: &Format,
) -> ApiResult<Reply<Vec<AgentTimes>>> {
    let times = state.services.agent_times(&auth.tenant_id, kind, &filter).await?;
    Ok(Reply::new(format, "agent-times", times, |t| csv::agent_times(t)))
}

fn body_filter(body: AgentTimesRequest) -> DateFilter {
    DateFilter {
        grouping: body.grouping,
        from: body.from,
        to: body.to,
        time_zone: body.time_zone,
    }
}

/// Agent online times: per agent, the online intervals of the period and their sum
/// in minutes (spec 4.1, 2.17).
#[utoipa::path(post, path = "/report/agent/times/online", tag = "report", request_body = AgentTimesRequest, params(Format),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, description = "The report (as CSV with `?format=csv`)", content((Vec<AgentTimes> = "application/json"), (String = "text/csv"))), AuthErrors, InputErrors))]
async fn times_online(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(format): ApiQuery<Format>,
    ApiJson(body): ApiJson<AgentTimesRequest>,
) -> ApiResult<Reply<Vec<AgentTimes>>> {
    times(&state, &auth, TimesKind::Online, body_filter(body), &format).await
}

/// Agent logged-in times (the logged-in variant of the times list).
#[utoipa::path(post, path = "/report/agent/times/loggedin", tag = "report", request_body = AgentTimesRequest, params(Format),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, description = "The report (as CSV with `?format=csv`)", content((Vec<AgentTimes> = "application/json"), (String = "text/csv"))), AuthErrors, InputErrors))]
async fn times_logged_in(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(format): ApiQuery<Format>,
    ApiJson(body): ApiJson<AgentTimesRequest>,
) -> ApiResult<Reply<Vec<AgentTimes>>> {
    times(&state, &auth, TimesKind::LoggedIn, body_filter(body), &format).await
}

/// Date range parameters of the ranged report forms (spec 4.2).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct Range {
    /// Start, unix ms (inclusive). Either edge makes the range `CUSTOM`; without
    /// `to`, it ends now, five years later or a day later, whichever is first
    /// and after `from`.
    #[param(minimum = 0, maximum = 253402300799999.0)]
    from: Option<i64>,
    /// End, unix ms (exclusive): after `from` (else 422 `before_start`), at most five
    /// years later (else 422 `range_too_long`). Without `from`, the range starts
    /// five years earlier, or at 0.
    #[param(minimum = 1, maximum = 253402300799999.0)]
    to: Option<i64>,
    /// The period when no range is given, and the bucket size.
    grouping: Option<Grouping>,
    /// IANA zone; default the tenant's.
    #[param(example = "Europe/Berlin")]
    time_zone: Option<String>,
    /// `json` (default) or `csv` (a `text/csv` download); other values answer JSON.
    #[param(example = "csv")]
    format: Option<String>,
}

impl Range {
    fn split(self) -> (DateFilter, Format) {
        (
            ranged_filter(self.grouping, self.from, self.to, self.time_zone),
            Format { format: self.format },
        )
    }
}

/// Agent online times for a date range (ranged form).
#[utoipa::path(get, path = "/report/agent/times/online/range", tag = "report", params(Range),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, description = "The report (as CSV with `?format=csv`)", content((Vec<AgentTimes> = "application/json"), (String = "text/csv"))), AuthErrors, InputErrors))]
async fn times_online_range(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(range): ApiQuery<Range>,
) -> ApiResult<Reply<Vec<AgentTimes>>> {
    let (filter, format) = range.split();
    times(&state, &auth, TimesKind::Online, filter, &format).await
}

/// Agent logged-in times for a date range (ranged form).
#[utoipa::path(get, path = "/report/agent/times/loggedin/range", tag = "report", params(Range),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, description = "The report (as CSV with `?format=csv`)", content((Vec<AgentTimes> = "application/json"), (String = "text/csv"))), AuthErrors, InputErrors))]
async fn times_logged_in_range(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(range): ApiQuery<Range>,
) -> ApiResult<Reply<Vec<AgentTimes>>> {
    let (filter, format) = range.split();
    times(&state, &auth, TimesKind::LoggedIn, filter, &format).await
}

/// Agent metrics split by conversation: per bucket and agent, conversations,
/// answered, done, mean first response and response time (seconds), messages sent.
#[utoipa::path(get, path = "/report/agent/conversations", tag = "report", params(Range),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, description = "The report (as CSV with `?format=csv`)", content((AgentConversationReport = "application/json"), (String = "text/csv"))), AuthErrors, InputErrors))]
async fn agent_conversations(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(range): ApiQuery<Range>,
) -> ApiResult<Reply<AgentConversationReport>> {
    let (filter, format) = range.split();
    let report = state
        .services
        .agent_conversation_split(&auth.tenant_id, &filter, Strategy::Rollups)
        .await?;
    Ok(Reply::new(
        &format,
        "agent-conversations",
        report,
        csv::agent_conversations,
    ))
}

async fn aggregate(
    state: &AppState,
    auth: &TenantAuth,
    report: Report,
    request: ReportRequest,
    format: &Format,
) -> ApiResult<Reply<AggregationResponse>> {
    let answer = state
        .services
        .aggregate_report(&auth.tenant_id, report, &request, Strategy::Rollups)
        .await?;
    let name = match report {
        Report::Agent => "agent",
        Report::Chat => "chat",
        Report::Message => "message",
        Report::Session => "session",
        Report::SessionReason => "session-reason",
        Report::Visit => "visit",
        Report::VisitPages => "visit-pages",
        Report::Cobrowse => "cobrowse",
        Report::CobrowseUniversal => "cobrowse-universal",
        Report::Conference => "conference",
        Report::Rule => "rule",
    };
    Ok(Reply::new(format, name, answer, csv::aggregation))
}

/// Declares one aggregation report operation.
// rustfmt re-indents the attribute's continuation lines on every run.
#[rustfmt::skip]
macro_rules! aggregation_report {
    ($fn:ident, $path:literal, $report:ident, $doc:literal) => {
        #[doc = $doc]
        #[utoipa::path(post, path = $path, tag = "report", request_body = ReportRequest, params(Format),
                    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
                    responses((status = 200, description = "The report (as CSV with `?format=csv`)", content((AggregationResponse = "application/json"), (String = "text/csv"))), AuthErrors, InputErrors))]
        async fn $fn(
            auth: TenantAuth,
            State(state): State<AppState>,
            ApiQuery(format): ApiQuery<Format>,
            ApiJson(request): ApiJson<ReportRequest>,
        ) -> ApiResult<Reply<AggregationResponse>> {
            aggregate(&state, &auth, Report::$report, request, &format).await
        }
    };
}

aggregation_report!(agent, "/report/agent", Agent, "Agent report: `ONLINE_TIME`, `LOGGED_IN_TIME`, `AWAY_TIME` in seconds; `groupBy` `AGENT` keys each bucket by user id, `AGENT_EMAIL` by the agent's e-mail address (spec 4.1).");
aggregation_report!(
    chat,
    "/report/chat",
    Chat,
    "Chat report: conversations, answered, done, status changes, mean first response and response times."
);
aggregation_report!(
    message,
    "/report/message",
    Message,
    "Message report: messages in, out and both (`groupBy` `AGENT`, `AGENT_EMAIL` or `TYPE`), and messages sent from text blocks (`TEXT_BLOCKS_USED`, `groupBy` `AGENT`, `AGENT_EMAIL` or `TEXT_BLOCK`)."
);
aggregation_report!(
    session,
    "/report/session",
    Session,
    "Session report: recorded sessions, their total and mean length; `groupBy` `REASON`."
);
aggregation_report!(
    session_reason,
    "/report/session/reason",
    SessionReason,
    "Session reason report: the session metrics keyed by reason (`groupBy` `REASON` by default)."
);
aggregation_report!(visit, "/report/visit", Visit, "Visit report: visits, unique visitors, page views, mean visit length; filters `tags`, `visitorIds`, `externalIds`, `baseUrl`.");
aggregation_report!(
    visit_pages,
    "/report/visit/pages",
    VisitPages,
    "Visit report by entry page (same request; `groupBy` `PAGE` by default)."
);
aggregation_report!(
    cobrowse,
    "/report/cobrowse",
    Cobrowse,
    "Co-browse report (co-browsing started from the visitor script); filter `tags`."
);
aggregation_report!(
    cobrowse_universal,
    "/report/cobrowse/universal",
    CobrowseUniversal,
    "Universal co-browse report (sessions from generated links); same request as the co-browse report."
);
aggregation_report!(
    conference,
    "/report/conference",
    Conference,
    "Conference report: conferences, minutes, mean length, participants."
);
aggregation_report!(rule, "/report/rule/", Rule, "Rule report: rule matches and SLA outcomes, keyed by bucket then metric name; `ruleIds` restricts to those rules (spec 4.1).");
aggregation_report!(
    rule_no_slash,
    "/report/rule",
    Rule,
    "The rule report without the trailing slash."
);

/// Conversation-resource report (spec 2.16): page resources with their measured
/// load times, filtered, optionally grouped (same-named resources averaged).
#[utoipa::path(post, path = "/report/resources", tag = "report", request_body = ResourceFilter, params(Format),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, description = "The report (as CSV with `?format=csv`)", content((ResourceReport = "application/json"), (String = "text/csv"))), AuthErrors, InputErrors))]
async fn resources(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(format): ApiQuery<Format>,
    ApiJson(filter): ApiJson<ResourceFilter>,
) -> ApiResult<Reply<ResourceReport>> {
    let report = state
        .services
        .resource_report(&auth.tenant_id, &filter, Strategy::Rollups)
        .await?;
    Ok(Reply::new(&format, "resources", report, csv::resources))
}

/// Script-error report (spec 2.16, second filter set): distinct errors with counts
/// and affected visitors, and per-bucket totals.
#[utoipa::path(post, path = "/report/scripterrors", tag = "report", request_body = ScriptErrorFilter, params(Format),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, description = "The report (as CSV with `?format=csv`)", content((ScriptErrorReport = "application/json"), (String = "text/csv"))), AuthErrors, InputErrors))]
async fn script_errors(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(format): ApiQuery<Format>,
    ApiJson(filter): ApiJson<ScriptErrorFilter>,
) -> ApiResult<Reply<ScriptErrorReport>> {
    let report = state
        .services
        .script_error_report(&auth.tenant_id, &filter, Strategy::Rollups)
        .await?;
    Ok(Reply::new(&format, "script-errors", report, csv::script_errors))
}
