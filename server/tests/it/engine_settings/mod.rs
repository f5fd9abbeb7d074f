//! The settings the engines read, and opening hours that say whether they are
//! open: the workspace's language, default capacity and business hours (over
//! `/workspace` with a tenant key, `/tenant/{id}` with a platform key, and the
//! dashboard), a user's capacity (`maxConcurrentChats`), and
//! `/openinghours/{id}/state`.

mod in_dashboard;
mod over_rest;

use serde_json::{json, Value};

/// Berlin, workdays 09:00–18:00, Easter Monday 2026 off.
fn office_hours() -> Value {
    json!({
        "name": "Office",
        "timezone": "Europe/Berlin",
        "conditions": [{"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 9, "minute": 0}, "endHours": {"hour": 18, "minute": 0}}],
        "holidays": [{"name": "Easter Monday", "from": {"year": 2026, "month": 4, "day": 6}}]
    })
}

/// The codes of a problem's errors, in order.
fn codes(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap().to_string())
        .collect()
}
