//! Action rules beyond their CRUD (in [`super::config`]): export and import as
//! one JSON document, so that rules move between workspaces.

use axum::{extract::State, Json};
use rapport_core::config::rules::action::ActionRule;
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, InputErrors},
        extract::{ApiJson, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(export)).routes(routes!(import))
}

/// A workspace's action rules as one document: what the export gives and the
/// import takes.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"rules": [{"name": "Hide the chat at night", "trigger": "PAGE",
    "conditions": [{"type": "AGENTS_OFFLINE"}], "action": {"type": "HIDE_BUTTON"}}]}))]
pub struct ActionRules {
    /// The rules (an import takes at most 1000; none imports nothing).
    #[schema(max_items = 1000)]
    pub rules: Vec<ActionRule>,
}

/// Every action rule of the workspace, by name, with ids: import it into
/// another workspace (or back into this one) with `POST /rule/action/import`.
#[utoipa::path(get, path = "/rule/action/export", tag = "rule",
    summary = "Export the action rules",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = ActionRules), AuthErrors))]
async fn export(auth: TenantAuth, State(state): State<AppState>) -> ApiResult<Json<ActionRules>> {
    Ok(Json(ActionRules {
        rules: state.services.export_action_rules(&auth.tenant_id).await?,
    }))
}

/// Import action rules, all or none: every rule is checked first, and one bad
/// rule refuses the import with 422 naming `rules[i].field`, storing nothing.
/// A rule with the id of one of this workspace's action rules replaces it; any
/// other (no id, or an id from another workspace) is created. References
/// (opening hours, flows) must exist in this workspace. Answers the stored rules,
/// in the order given; each is audited as its own create or update.
#[utoipa::path(post, path = "/rule/action/import", tag = "rule", request_body = ActionRules,
    summary = "Import action rules",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = ActionRules, description = "The stored rules"), AuthErrors, InputErrors))]
async fn import(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<ActionRules>,
) -> ApiResult<Json<ActionRules>> {
    Ok(Json(ActionRules {
        rules: state
            .services
            .import_action_rules(&auth.tenant_id, input.rules, &auth.actor)
            .await?,
    }))
}
