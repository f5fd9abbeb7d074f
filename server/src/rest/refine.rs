//! What the generated OpenAPI document cannot say through utoipa's derives, added
//! to it as JSON before it is served:
//!
//! - input rules that depend on other fields (`type: CARD` needs `buttonText`, a
//!   `CUSTOM` period needs `from` and `to`, …), as JSON Schema 2020-12 conditions
//!   (`if`/`then`, `not`, `anyOf`) appended to the schema's `allOf`; each type
//!   states its own in a `schema_conditions()` next to its fields;
//! - per report operation, the `metricName`s, `groupBy`s and filters that report
//!   takes, from the metric catalogue the engine itself reads.
//!
//! So a client built from the document, or the conformance test that fuzzes it,
//! sends nothing the document calls complete that the server then refuses.

use rapport_core::{
    appointments::AppointmentIn,
    config::{
        flows::FlowMessage,
        opening_hours::Holiday,
        rules::{action::ChatAction, QueueTarget},
        watchdogs::WatchdogReceiver,
    },
    conversations::{MessageIn, WidgetMessageIn},
    customers::{Assignment, CustomerIn},
    links::LiveViewLinkRequest,
    reports::{
        api::{AgentTimesRequest, DateFilter, MetricEntry, ResourceFilter, ScriptErrorFilter},
        catalogue::{self, Filters, Report},
        errors, resources,
    },
    sessions::Pageable,
    text_blocks::TextBlockIn,
    users::UserIn,
};
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::BASE;

/// Applies every refinement to the document.
pub fn refine(doc: &mut Value) {
    let conditions = [
        (MessageIn::name(), MessageIn::schema_conditions()),
        (WidgetMessageIn::name(), WidgetMessageIn::schema_conditions()),
        (FlowMessage::name(), FlowMessage::schema_conditions()),
        (CustomerIn::name(), CustomerIn::schema_conditions()),
        (Assignment::name(), Assignment::schema_conditions()),
        (UserIn::name(), UserIn::schema_conditions()),
        (AppointmentIn::name(), AppointmentIn::schema_conditions()),
        (WatchdogReceiver::name(), WatchdogReceiver::schema_conditions()),
        (QueueTarget::name(), QueueTarget::schema_conditions()),
        (ChatAction::name(), ChatAction::schema_conditions()),
        (Holiday::name(), Holiday::schema_conditions()),
        (TextBlockIn::name(), TextBlockIn::schema_conditions()),
        (Pageable::name(), Pageable::schema_conditions()),
        (LiveViewLinkRequest::name(), LiveViewLinkRequest::schema_conditions()),
        (DateFilter::name(), DateFilter::schema_conditions()),
        (AgentTimesRequest::name(), DateFilter::schema_conditions()),
        (MetricEntry::name(), id_lists(&["visitorIds", "externalIds", "ruleIds"])),
        (ResourceFilter::name(), filter_conditions(&resources::criteria_keys())),
        (ScriptErrorFilter::name(), filter_conditions(&errors::criteria_keys())),
    ];
    for (name, rules) in conditions {
        let schema = &mut doc["components"]["schemas"][name.as_ref()];
        assert!(schema.is_object(), "schema {name} is in the document");
        add_conditions(schema, rules);
    }
    for report in Report::ALL {
        let mut paths = vec![format!("{BASE}/report/{}", report.path())];
        if report == Report::Rule {
            paths.push(format!("{BASE}/report/rule/"));
        }
        for path in paths {
            let body = &mut doc["paths"][path.as_str()]["post"]["requestBody"]["content"]["application/json"];
            assert!(body.is_object(), "POST {path} takes a JSON body");
            body["schema"] = report_request(report);
        }
    }
}

/// Lists of ids (visitors, external ids, rules) hold non-blank ids of at most 200
/// characters, as the reports check them.
fn id_lists(fields: &[&str]) -> Value {
    let id = json!({"type": "string", "minLength": 1, "maxLength": 200, "pattern": "\\S"});
    let properties: serde_json::Map<String, Value> =
        fields.iter().map(|f| (f.to_string(), json!({"items": id}))).collect();
    json!([{"properties": properties}])
}

/// The resource and script-error filters: their id lists, and the fields and
/// conditions their `criteria` takes.
fn filter_conditions(criteria_keys: &[&str]) -> Value {
    let mut conditions = id_lists(&["visitorIds", "externalIds"]);
    conditions.as_array_mut().expect("a list").push(json!({
        "properties": {"criteria": {"properties": {
            "key": {"enum": criteria_keys},
            "criteriaObject": {"propertyNames": {"enum": resources::CRITERIA_CONDITIONS}},
        }}}
    }));
    conditions
}

/// Appends `rules` (an array of schemas) to `schema`'s `allOf`.
fn add_conditions(schema: &mut Value, rules: Value) {
    let Value::Array(rules) = rules else {
        panic!("conditions are an array of schemas");
    };
    let all_of = schema
        .as_object_mut()
        .expect("a schema object")
        .entry("allOf")
        .or_insert_with(|| json!([]));
    all_of.as_array_mut().expect("allOf is an array").extend(rules);
}

/// The request body of one aggregation report: the common `ReportRequest`, with the
/// metrics, `groupBy` values and filters of this report.
fn report_request(report: Report) -> Value {
    let allowed = report.filters();
    let absent = json!({"type": "null"});
    let mut filters = serde_json::Map::new();
    if !matches!(allowed, Filters::Tags | Filters::Visit) {
        filters.insert("tags".into(), absent.clone());
    }
    if allowed != Filters::Visit {
        for name in ["visitorIds", "externalIds", "baseUrl"] {
            filters.insert(name.into(), absent.clone());
        }
    }
    if allowed != Filters::Rules {
        filters.insert("ruleIds".into(), absent.clone());
    }
    let metrics: Vec<Value> = catalogue::METRICS
        .iter()
        .filter(|m| m.report == report)
        .map(|m| {
            let groups: Vec<&str> = m.group_by.iter().map(|g| g.name).collect();
            // Without a `groupBy` the report's default applies, if it has one.
            let default_fits = report.default_group_by().is_none_or(|d| groups.contains(&d));
            let mut group_by = json!({"enum": groups});
            if default_fits {
                group_by["enum"].as_array_mut().expect("an array").push(Value::Null);
            }
            let mut metric = json!({"properties": {"metricName": {"const": m.name}, "groupBy": group_by}});
            if !default_fits {
                metric["required"] = json!(["groupBy"]);
            }
            metric
        })
        .collect();
    let grouped = json!({"required": ["groupBy"], "properties": {"groupBy": {"type": "string"}}});
    json!({
        "allOf": [
            {"$ref": format!("#/components/schemas/{}", rapport_core::reports::api::ReportRequest::name())},
            {
                "properties": {"metrics": {"items": {"oneOf": metrics, "properties": filters}}},
                "if": {"properties": {"metrics": {"contains": grouped}}},
                "then": {"properties": {"metrics": {"maxItems": 1}}}
            }
        ],
        "description": format!(
            "A report request (spec 2.15) for the {} report: the metrics, `groupBy` values and \
             filters below are those of this report (`GET /rest/v1/report/metrics` lists them). \
             With a `groupBy`, the request carries exactly one metric.",
            report.path()
        )
    })
}
