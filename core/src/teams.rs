//! Teams (spec 2.7): named groups of users, the targets of routing and assignment.
//! Members must be users of the same tenant.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::{placeholders, TenantTable, Tx},
    error::CoreResult,
    ids::{TeamId, TenantId, UserId},
    model::{Page, PageRequest},
    time::{from_ms, now_ms},
    validate::{Checks, Paging, MAX_TAGS},
    with_db, with_tx, Services,
};

/// Most members in one team.
pub const MAX_MEMBERS: usize = 500;

/// A team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Team {
    /// Unique id.
    #[schema(value_type = String)]
    pub id: TeamId,
    /// Name.
    pub name: String,
    /// Ids of the member users, in the order given.
    pub members: Vec<String>,
    /// Unique tags.
    pub tags: Vec<String>,
    /// When the team was created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When the team was last changed.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// Input to create, override or update a team (spec 2.7).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "Billing", "members": ["0196f0c2-7a1e-7c3a-9a51-2f6f5a0b1c2d"], "tags": ["billing"]}))]
pub struct TeamIn {
    /// Optional id of an existing team to override (create/override); unknown ids are 404.
    pub id: Option<String>,
    /// Name (required, at most 200 characters).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// Ids of member users of this tenant, unique (at most 500).
    #[schema(max_items = 500)]
    pub members: Option<Vec<String>>,
    /// Unique tags (at most 50, each 1–64 characters).
    #[schema(value_type = Option<Vec<crate::validate::Tag>>, max_items = 50)]
    pub tags: Option<Vec<String>>,
}

/// The teams table, as [`TeamRow`] reads it.
const TEAMS: TenantTable = TenantTable {
    table: "teams",
    columns: "id, name, tags, created_at, updated_at",
    what: "team",
    narrow: "",
};

#[derive(sqlx::FromRow)]
struct TeamRow {
    id: TeamId,
    name: String,
    tags: String,
    created_at: i64,
    updated_at: i64,
}

impl Services {
    /// Creates a team, or, when `id` is given, overrides that team (404 if unknown).
    pub async fn save_team(&self, tenant_id: &TenantId, input: TeamIn, actor: &Actor) -> CoreResult<Team> {
        match input.id.clone() {
            Some(id) => self.update_team(tenant_id, &TeamId::from(id), input, actor).await,
            None => {
                let id = TeamId::new(uuid::Uuid::now_v7().to_string());
                self.write_team(tenant_id, &id, input, false, actor).await
            }
        }
    }

    /// Replaces a team's fields.
    pub async fn update_team(
        &self,
        tenant_id: &TenantId,
        id: &TeamId,
        input: TeamIn,
        actor: &Actor,
    ) -> CoreResult<Team> {
        self.get_team(tenant_id, id).await?;
        self.write_team(tenant_id, id, input, true, actor).await
    }

    async fn write_team(
        &self,
        tenant_id: &TenantId,
        id: &TeamId,
        input: TeamIn,
        existing: bool,
        actor: &Actor,
    ) -> CoreResult<Team> {
        let mut checks = Checks::new();
        let name = checks.required_text("name", input.name.as_deref(), 200);
        let members = input.members.unwrap_or_default();
        checks.unique_items("members", &members, MAX_MEMBERS, |_, _, _| {});
        let tags = input.tags.unwrap_or_default();
        checks.tags("tags", &tags, MAX_TAGS);
        let known = self.existing_user_ids(tenant_id, &members).await?;
        for (i, m) in members.iter().enumerate() {
            if !known.contains(m) && !members[..i].contains(m) {
                checks.unknown_reference(&format!("members[{i}]"), "user", m);
            }
        }
        checks.finish()?;

        let now = now_ms();
        let tags_json = serde_json::to_string(&tags).unwrap_or_default();
        let mut tx = self.db().begin().await?;
        if existing {
            with_tx!(&mut tx, |conn| sqlx::query(
                "update teams set name = $3, tags = $4, updated_at = $5 where tenant_id = $1 and id = $2"
            )
            .bind(tenant_id)
            .bind(id)
            .bind(&name)
            .bind(&tags_json)
            .bind(now)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
            with_tx!(&mut tx, |conn| sqlx::query(
                "delete from team_members where team_id = $1"
            )
            .bind(id)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        } else {
            with_tx!(&mut tx, |conn| sqlx::query(
                "insert into teams (id, tenant_id, name, tags, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)"
            )
            .bind(id)
            .bind(tenant_id)
            .bind(&name)
            .bind(&tags_json)
            .bind(now)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        }
        for (position, member) in members.iter().enumerate() {
            with_tx!(&mut tx, |conn| sqlx::query(
                "insert into team_members (team_id, user_id, position) values ($1, $2, $3)"
            )
            .bind(id)
            .bind(member)
            .bind(position as i64)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        }
        let action = if existing { "team.update" } else { "team.create" };
        audit::record(&mut tx, Some(tenant_id), actor, action, "team", Some(id.as_str())).await?;
        tx.commit().await?;
        self.get_team(tenant_id, id).await
    }

    /// One team of the tenant.
    pub async fn get_team(&self, tenant_id: &TenantId, id: &TeamId) -> CoreResult<Team> {
        let row: TeamRow = TEAMS.get(self.db(), tenant_id, id).await?;
        let members = self.team_members(std::slice::from_ref(&row.id)).await?;
        Ok(team_from(row, &members))
    }

    /// A page of the tenant's teams, by name.
    pub async fn list_teams(&self, tenant_id: &TenantId, page: &PageRequest) -> CoreResult<Page<Team>> {
        let paging = Paging::from_request(page)?;
        let (total, rows): (i64, Vec<TeamRow>) = TEAMS.page(self.db(), tenant_id, "name, id", &paging).await?;
        let ids: Vec<TeamId> = rows.iter().map(|r| r.id.clone()).collect();
        let members = self.team_members(&ids).await?;
        Ok(paging.page(total, rows.into_iter().map(|r| team_from(r, &members)).collect()))
    }

    /// Deletes a team; customers assigned to it become unassigned.
    pub async fn delete_team(&self, tenant_id: &TenantId, id: &TeamId, actor: &Actor) -> CoreResult<()> {
        self.get_team(tenant_id, id).await?;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update customers set assigned_team_id = null where tenant_id = $1 and assigned_team_id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "delete from teams where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "team.delete",
            "team",
            Some(id.as_str()),
        )
        .await?;
        tx.commit().await
    }

    /// `(team id, user id)` of the members of these teams, in member order; one query.
    async fn team_members(&self, team_ids: &[TeamId]) -> CoreResult<Vec<(TeamId, String)>> {
        if team_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "select team_id, user_id from team_members where team_id in ({}) order by team_id, position",
            placeholders(1, team_ids.len())
        );
        let rows: Vec<(TeamId, String)> = with_db!(self.db(), |pool| {
            let mut query = sqlx::query_as(&sql);
            for id in team_ids {
                query = query.bind(id);
            }
            query.fetch_all(pool).await
        })?;
        Ok(rows)
    }

    /// Which of `ids` are users of the tenant; one query.
    pub(crate) async fn existing_user_ids(&self, tenant_id: &TenantId, ids: &[String]) -> CoreResult<Vec<String>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "select id from users where tenant_id = $1 and id in ({})",
            placeholders(2, ids.len())
        );
        let found: Vec<String> = with_db!(self.db(), |pool| {
            let mut query = sqlx::query_scalar(&sql).bind(tenant_id);
            for id in ids {
                query = query.bind(id);
            }
            query.fetch_all(pool).await
        })?;
        Ok(found)
    }
}

fn team_from(row: TeamRow, members: &[(TeamId, String)]) -> Team {
    Team {
        members: members
            .iter()
            .filter(|(t, _)| *t == row.id)
            .map(|(_, u)| u.clone())
            .collect(),
        tags: serde_json::from_str(&row.tags).unwrap_or_default(),
        id: row.id,
        name: row.name,
        created_at: from_ms(row.created_at),
        updated_at: from_ms(row.updated_at),
    }
}

/// Removes a user from every team of the tenant (when the user is deleted).
pub(crate) async fn remove_member_everywhere(tx: &mut Tx, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "delete from team_members where user_id = $2 and team_id in (select id from teams where tenant_id = $1)"
    )
    .bind(tenant_id)
    .bind(user_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}
