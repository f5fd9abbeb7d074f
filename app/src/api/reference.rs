//! The REST API reference, read from the server's own OpenAPI document so the page
//! works without internet access and never drifts from the API.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One documented operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operation {
    /// HTTP method, upper-case.
    pub method: String,
    /// Full path, e.g. `/rest/v1/tenant/{id}`.
    pub path: String,
    /// Tag (resource group).
    pub tag: String,
    /// One-line summary.
    pub summary: String,
    /// Longer description, if any.
    pub description: String,
    /// Parameters as `name (in): description`.
    pub parameters: Vec<String>,
    /// Request body schema name, if any.
    pub request_body: Option<String>,
    /// Responses as `status: description`.
    pub responses: Vec<String>,
    /// Accepted security schemes.
    pub security: Vec<String>,
}

/// The API's operations, in document order.
#[server(endpoint = "api_operations")]
pub async fn api_operations() -> Result<Vec<Operation>, ServerFnError> {
    let _ = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let ctx = crate::ssr::context()?;
    Ok(operations(&ctx.openapi))
}

#[cfg(feature = "ssr")]
fn operations(doc: &serde_json::Value) -> Vec<Operation> {
    use serde_json::Value;
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    // A schema is a reference, or (report requests) a reference narrowed by `allOf`.
    let schema_name = |v: &Value| {
        v.pointer("/content/application~1json/schema/$ref")
            .or_else(|| v.pointer("/content/application~1json/schema/allOf/0/$ref"))
            .and_then(Value::as_str)
            .map(|r| r.rsplit('/').next().unwrap_or(r).to_string())
    };
    let mut out = Vec::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return out;
    };
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            continue;
        };
        for (method, op) in item {
            let parameters = op
                .get("parameters")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .map(|p| format!("{} ({}): {}", text(p, "name"), text(p, "in"), text(p, "description")))
                        .collect()
                })
                .unwrap_or_default();
            let responses = op
                .get("responses")
                .and_then(Value::as_object)
                .map(|rs| {
                    rs.iter()
                        .map(|(status, r)| format!("{status}: {}", text(r, "description")))
                        .collect()
                })
                .unwrap_or_default();
            let security = op
                .get("security")
                .and_then(Value::as_array)
                .map(|ss| {
                    ss.iter()
                        .filter_map(Value::as_object)
                        .flat_map(|o| o.keys().cloned())
                        .collect()
                })
                .unwrap_or_default();
            out.push(Operation {
                method: method.to_uppercase(),
                path: path.clone(),
                tag: op
                    .pointer("/tags/0")
                    .and_then(Value::as_str)
                    .unwrap_or("other")
                    .to_string(),
                summary: text(op, "summary"),
                description: text(op, "description"),
                parameters,
                request_body: op.get("requestBody").and_then(schema_name),
                responses,
                security,
            });
        }
    }
    out
}
