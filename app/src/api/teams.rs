//! Teams of the tenant, from the dashboard (admins): the same services as
//! `/rest/v1/team`, with a member picker over the tenant's users.

use leptos::prelude::*;
use rapport_core::model::PageInfo;
use serde::{Deserialize, Serialize};

/// Where teams are managed.
pub const TEAMS_PATH: &str = "/settings/teams";

/// Teams per page of the list.
pub const TEAMS_PER_PAGE: i64 = 25;

/// A team as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamView {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Member ids, in order.
    pub members: Vec<String>,
    /// Tags.
    pub tags: Vec<String>,
}

/// One page of the team list, with each member's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamList {
    /// The teams on this page.
    pub teams: Vec<TeamView>,
    /// Where the page sits.
    pub page: PageInfo,
}

/// A member the picker offers: id, name, e-mail.
pub type Member = (String, String, String);

#[cfg(feature = "ssr")]
mod server {
    use rapport_core::{model::PageRequest, teams::Team, Services};

    use super::TeamView;

    pub(super) fn view(t: Team) -> TeamView {
        TeamView {
            id: t.id.into_string(),
            name: t.name,
            members: t.members,
            tags: t.tags,
        }
    }

    /// Every team of the tenant, by name.
    pub(super) async fn all_teams(
        services: &Services,
        tenant_id: &rapport_core::ids::TenantId,
    ) -> rapport_core::error::CoreResult<Vec<Team>> {
        let mut teams = Vec::new();
        for number in 0.. {
            let page = services
                .list_teams(
                    tenant_id,
                    &PageRequest {
                        page_number: Some(number),
                        page_size: Some(PageRequest::MAX_PAGE_SIZE),
                        offset: None,
                    },
                )
                .await?;
            let last = page.page.page_number + 1 >= page.page.total_pages;
            teams.extend(page.results);
            if last {
                break;
            }
        }
        Ok(teams)
    }
}

/// Every team of the tenant as `(id, name)`, for pickers elsewhere.
#[cfg(feature = "ssr")]
pub(crate) async fn all_team_names(
    services: &rapport_core::Services,
    tenant_id: &rapport_core::ids::TenantId,
) -> rapport_core::error::CoreResult<Vec<(String, String)>> {
    Ok(server::all_teams(services, tenant_id)
        .await?
        .into_iter()
        .map(|t| (t.id.into_string(), t.name))
        .collect())
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// A page of teams by name; `search` matches part of the name, ignoring case.
#[server(endpoint = "list_teams")]
pub async fn list_teams(search: Option<String>, page: Option<i64>) -> Result<TeamList, ServerFnError> {
    let (ctx, user) = admin().await?;
    let needle = search.unwrap_or_default().trim().to_lowercase();
    let matching: Vec<TeamView> = server::all_teams(&ctx.services, &user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .into_iter()
        .filter(|t| needle.is_empty() || t.name.to_lowercase().contains(&needle))
        .map(server::view)
        .collect();
    let total = matching.len() as i64;
    let number = page.unwrap_or(0).max(0);
    let teams = matching
        .into_iter()
        .skip((number * TEAMS_PER_PAGE) as usize)
        .take(TEAMS_PER_PAGE as usize)
        .collect();
    Ok(TeamList {
        teams,
        page: PageInfo {
            page_number: number,
            page_size: TEAMS_PER_PAGE,
            offset: number * TEAMS_PER_PAGE,
            total_elements: total,
            total_pages: (total + TEAMS_PER_PAGE - 1) / TEAMS_PER_PAGE,
        },
    })
}

/// Everyone who can be a member: `(id, name, e-mail)`, by e-mail.
#[server(endpoint = "team_candidates")]
pub async fn team_candidates() -> Result<Vec<Member>, ServerFnError> {
    use rapport_core::model::PageRequest;
    let (ctx, user) = admin().await?;
    let mut members = Vec::new();
    for number in 0.. {
        let page = ctx
            .services
            .list_users(
                &user.tenant_id,
                None,
                &PageRequest {
                    page_number: Some(number),
                    page_size: Some(PageRequest::MAX_PAGE_SIZE),
                    offset: None,
                },
            )
            .await
            .map_err(crate::ssr::to_server_error)?;
        let last = page.page.page_number + 1 >= page.page.total_pages;
        members.extend(
            page.results
                .into_iter()
                .map(|u| (u.id.into_string(), u.display_name.unwrap_or_default(), u.email)),
        );
        if last {
            break;
        }
    }
    Ok(members)
}

/// One team.
#[server(endpoint = "get_team")]
pub async fn get_team(id: String) -> Result<TeamView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .get_team(&user.tenant_id, &rapport_core::ids::TeamId::from(id))
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

#[cfg(feature = "ssr")]
fn team_in(name: String, tags: String, members: Option<Vec<String>>) -> rapport_core::teams::TeamIn {
    rapport_core::teams::TeamIn {
        id: None,
        name: Some(name.trim().to_string()),
        members: Some(members.unwrap_or_default()),
        tags: Some(crate::api::users::split_tags(&tags)),
    }
}

/// Adds a team; `members[]` are the ticked users.
#[server(endpoint = "add_team")]
pub async fn add_team(name: String, tags: String, members: Option<Vec<String>>) -> Result<TeamView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .save_team(&user.tenant_id, team_in(name, tags, members), &crate::ssr::actor(&user))
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Replaces a team's name, tags and members (none ticked: no members).
#[server(endpoint = "edit_team")]
pub async fn edit_team(
    id: String,
    name: String,
    tags: String,
    members: Option<Vec<String>>,
) -> Result<TeamView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .update_team(
            &user.tenant_id,
            &rapport_core::ids::TeamId::from(id),
            team_in(name, tags, members),
            &crate::ssr::actor(&user),
        )
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Deletes a team (its customers become unassigned), then shows the list.
#[server(endpoint = "remove_team")]
pub async fn remove_team(id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_team(
            &user.tenant_id,
            &rapport_core::ids::TeamId::from(id),
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(TEAMS_PATH);
    Ok(())
}
