//! Report dashboards for supervisors: one page per report family, computed by the
//! same services as `/rest/v1/report/…`, so the page shows what the REST
//! operation returns for the same query. What a page asks and is answered is
//! [`view`]; the server side that answers it is `crate::reports`.

pub mod view;

use leptos::prelude::*;

use self::view::{ReportQuery, ReportView};

/// The report page of `query`.
#[server(endpoint = "load_report")]
pub async fn load_report(query: ReportQuery) -> Result<ReportView, ServerFnError> {
    use crate::ssr::{require_role, to_server_error};
    let (ctx, user) = require_role(rapport_core::model::Role::Supervisor).await?;
    crate::reports::view(&ctx.services, &user.tenant_id, &query)
        .await
        .map_err(to_server_error)
}
