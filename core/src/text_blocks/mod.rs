//! Text blocks: answers ready to insert. An agent types `/` and a block's
//! shortcut in the inbox (or picks it from a list), and the block's text, with
//! its variables filled for this customer and this agent, takes the place of
//! the draft; the message sent from it counts as a use (`TEXT_BLOCKS_USED` in
//! the message report).
//!
//! A block belongs to the workspace (`TENANT`), to a team (its members see it)
//! or to one user. One owner holds at most one block per shortcut and language;
//! a block without a language serves every language. An agent sees, per
//! shortcut, the block that fits the customer best ([`best_fit`]): their own
//! over their team's over the workspace's, and among those the customer's
//! language, then its primary language, then the block for every language, then
//! the workspace's language.

mod fill;

use serde::{Deserialize, Serialize};

use fill::placeholders;
pub use fill::{best_fit, render, Variables, VARIABLES};

use crate::{
    audit::{self, Actor},
    db::{page, unique_violation, Arg, TenantTable, Tx},
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId, UserId},
    model::{Page, PageRequest},
    reports::{catalogue::TEXT_BLOCK_USED, facts},
    time::{from_ms, now_ms},
    validate::{Checks, Paging},
    with_db, with_tx, Services,
};

/// The shape of a shortcut, as the OpenAPI document states it.
pub const SHORTCUT_PATTERN: &str = "^[a-z0-9][a-z0-9_-]{0,39}$";
/// The text a block takes, as the OpenAPI document states it: not blank, and
/// each `{` that a `}` closes on its line names one of [`VARIABLES`], with an
/// optional `|fallback`.
pub const TEXT_PATTERN: &str = r"^(?=[\s\S]*\S)(?:[^{]|\{[^}\n]*(?:\n|$)|\{\s*(?:customer\.firstName|customer\.lastName|customer\.name|agent\.displayName|agent\.firstName)\s*(?:\|[^}\n]*)?\})*$";
/// Longest text of a block, in characters.
pub const MAX_TEXT: usize = 4000;
/// Who shares a block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schema(as = TextBlockScope)]
pub enum Scope {
    /// Every agent of the workspace.
    #[default]
    Tenant,
    /// The members of `teamId`.
    Team,
    /// The user `userId` alone.
    User,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::Tenant => "TENANT",
            Scope::Team => "TEAM",
            Scope::User => "USER",
        }
    }

    fn parse(text: &str) -> Scope {
        match text {
            "TEAM" => Scope::Team,
            "USER" => Scope::User,
            _ => Scope::Tenant,
        }
    }
}

/// A text block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextBlock {
    /// Id.
    pub id: String,
    /// What an agent types after `/` to insert it.
    pub shortcut: String,
    /// The language it is written in (BCP 47); null: every language.
    pub language: Option<String>,
    /// The text, with variables such as `{customer.firstName}`.
    pub text: String,
    /// Who shares it.
    pub scope: Scope,
    /// With `TEAM`: the team.
    pub team_id: Option<String>,
    /// With `USER`: the user.
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
    /// How many messages were sent from it.
    pub uses: i64,
    /// When it was created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it was last changed.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// A text block to create or replace.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"shortcut": "hello", "language": "en", "text": "Hi {customer.firstName|there}, I am {agent.displayName}. How can I help?"}))]
pub struct TextBlockIn {
    /// What an agent types after `/`: 1–40 lowercase letters, digits, `_` or
    /// `-`, starting with a letter or digit.
    #[schema(
        required = true,
        nullable = false,
        pattern = "^[a-z0-9][a-z0-9_-]{0,39}$",
        example = "hello"
    )]
    pub shortcut: Option<String>,
    /// The language it is written in (BCP 47); omitted or null: every language.
    #[schema(
        max_length = 35,
        pattern = r"^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-[0-9A-WY-Za-wy-z](-[A-Za-z0-9]{2,8})+)*(-[Xx](-[A-Za-z0-9]{1,8})+)?$",
        example = "en"
    )]
    pub language: Option<String>,
    /// The text (1–4000 characters). `{customer.firstName}`,
    /// `{customer.lastName}`, `{customer.name}`, `{agent.displayName}` and
    /// `{agent.firstName}` are filled in when it is inserted; `{name|fallback}`
    /// gives the text for a value the customer lacks. Any other `{…}` is refused
    /// (`unknown_variable`).
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 4000,
        pattern = r"^(?=[\s\S]*\S)(?:[^{]|\{[^}\n]*(?:\n|$)|\{\s*(?:customer\.firstName|customer\.lastName|customer\.name|agent\.displayName|agent\.firstName)\s*(?:\|[^}\n]*)?\})*$"
    )]
    pub text: Option<String>,
    /// Who shares it (default `TENANT`).
    pub scope: Option<Scope>,
    /// With scope `TEAM` (and only then, required): the team, of this workspace.
    pub team_id: Option<String>,
    /// With scope `USER` (and only then, required): the user, of this workspace.
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
}

impl TextBlockIn {
    /// A `TEAM` block names its team and a `USER` block its user, and no other
    /// block names either, as JSON Schema conditions.
    pub fn schema_conditions() -> serde_json::Value {
        let given =
            |field: &str| serde_json::json!({"required": [field], "not": {"properties": {field: {"type": "null"}}}});
        let absent = |field: &str| {
            serde_json::json!({"anyOf": [
                {"not": {"required": [field]}},
                {"properties": {field: {"type": "null"}}},
            ]})
        };
        let scope_is =
            |scope: &str| serde_json::json!({"required": ["scope"], "properties": {"scope": {"const": scope}}});
        serde_json::json!([
            {"if": scope_is("TEAM"), "then": {"allOf": [given("teamId"), absent("userId")]}},
            {"if": scope_is("USER"), "then": {"allOf": [given("userId"), absent("teamId")]}},
            {"if": {"not": {"anyOf": [scope_is("TEAM"), scope_is("USER")]}}, "then": {"allOf": [absent("teamId"), absent("userId")]}},
        ])
    }
}

/// Which blocks a list shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextBlockFilter {
    /// Shortcuts starting with this.
    pub shortcut: Option<String>,
    /// Only blocks of this language (`""`: only blocks for every language).
    pub language: Option<String>,
    /// Only blocks shared this way.
    pub scope: Option<Scope>,
}

/// A block as an agent inserts it in one conversation: chosen for the
/// customer's language and filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextBlockChoice {
    /// The block's id (sent back with the message, to count the use).
    pub id: String,
    /// Its shortcut.
    pub shortcut: String,
    /// Its language; `None`: every language.
    pub language: Option<String>,
    /// Who shares it.
    pub scope: Scope,
    /// The text, variables filled in.
    pub text: String,
}

/// The text blocks table.
const TEXT_BLOCKS: TenantTable = TenantTable {
    table: "text_blocks",
    columns: "id, shortcut, language, body, scope, team_id, user_id, uses, created_at, updated_at",
    what: "text block",
    narrow: "",
};

#[derive(sqlx::FromRow)]
struct TextBlockRow {
    id: String,
    shortcut: String,
    language: Option<String>,
    body: String,
    scope: String,
    team_id: Option<String>,
    user_id: Option<UserId>,
    uses: i64,
    created_at: i64,
    updated_at: i64,
}

impl From<TextBlockRow> for TextBlock {
    fn from(r: TextBlockRow) -> Self {
        TextBlock {
            id: r.id,
            shortcut: r.shortcut,
            language: r.language,
            text: r.body,
            scope: Scope::parse(&r.scope),
            team_id: r.team_id,
            user_id: r.user_id,
            uses: r.uses,
            created_at: from_ms(r.created_at),
            updated_at: from_ms(r.updated_at),
        }
    }
}

/// A block's fields after validation.
struct Valid {
    shortcut: String,
    language: Option<String>,
    text: String,
    scope: Scope,
    team_id: Option<String>,
    user_id: Option<String>,
}

fn validate(input: &TextBlockIn) -> CoreResult<Valid> {
    let mut checks = Checks::new();
    let shortcut = checks.required_text("shortcut", input.shortcut.as_deref(), 40);
    if !shortcut.is_empty() {
        let mut chars = shortcut.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !first_ok || !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-') {
            checks.push(
                "shortcut",
                "invalid_shortcut",
                "shortcut takes lowercase letters, digits, _ and -, starting with a letter or digit",
            );
        }
    }
    let language = match checks.optional_text("language", input.language.as_deref(), 35) {
        Some(language) => checks.language("language", &language),
        None => None,
    };
    let text = checks.required_text("text", input.text.as_deref(), MAX_TEXT);
    {
        for p in placeholders(&text) {
            if !VARIABLES.contains(&p.name) {
                checks.push(
                    "text",
                    "unknown_variable",
                    format!(
                        "{{{}}} is not a variable; the variables are {}",
                        p.name,
                        VARIABLES.map(|v| format!("{{{v}}}")).join(", ")
                    ),
                );
                break;
            }
        }
    }
    let scope = input.scope.unwrap_or_default();
    let mut owner = |field: &str, value: Option<&str>, wanted: bool| -> Option<String> {
        match (value.map(str::trim).filter(|v| !v.is_empty()), wanted) {
            (Some(v), true) => Some(v.to_string()),
            (None, true) => {
                checks.push(
                    field,
                    "required",
                    format!("a {} block names its {field}", scope.as_str()),
                );
                None
            }
            (Some(_), false) => {
                checks.push(
                    field,
                    "not_allowed",
                    format!("a {} block takes no {field}", scope.as_str()),
                );
                None
            }
            (None, false) => None,
        }
    };
    let team_id = owner("teamId", input.team_id.as_deref(), scope == Scope::Team);
    let user_id = owner("userId", input.user_id.as_deref(), scope == Scope::User);
    checks.finish()?;
    Ok(Valid {
        shortcut,
        language,
        text,
        scope,
        team_id,
        user_id,
    })
}

fn taken(err: sqlx::Error) -> CoreError {
    if unique_violation(&err, "text_blocks_owner_shortcut_idx", "text_blocks_owner_shortcut_idx")
        || unique_violation(&err, "text_blocks_owner_shortcut_idx", "text_blocks.shortcut")
    {
        CoreError::Conflict {
            field: Some("shortcut".into()),
            code: "shortcut_taken",
            message: "this owner already has a block with this shortcut in this language".into(),
        }
    } else {
        err.into()
    }
}

/// Checks that a block's team or user is the tenant's (422 `unknown_reference`).
async fn check_owner(tx: &mut Tx, tenant_id: &TenantId, valid: &Valid) -> CoreResult<()> {
    let (table, field, id) = match (&valid.team_id, &valid.user_id) {
        (Some(team), _) => ("teams", "teamId", team),
        (None, Some(user)) => ("users", "userId", user),
        (None, None) => return Ok(()),
    };
    let sql = format!("select count(*) from {table} where tenant_id = $1 and id = $2");
    let n: i64 = with_tx!(tx, |conn| sqlx::query_scalar(&sql)
        .bind(tenant_id)
        .bind(id)
        .fetch_one(conn)
        .await)?;
    if n == 0 {
        return Err(CoreError::invalid(
            field,
            "unknown_reference",
            format!("{field} names no {} of this workspace", &table[..table.len() - 1]),
        ));
    }
    Ok(())
}

impl Services {
    /// Creates a text block.
    pub async fn create_text_block(
        &self,
        tenant_id: &TenantId,
        input: TextBlockIn,
        actor: &Actor,
    ) -> CoreResult<TextBlock> {
        let valid = validate(&input)?;
        let id = uuid::Uuid::now_v7().to_string();
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        check_owner(&mut tx, tenant_id, &valid).await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "insert into text_blocks (id, tenant_id, scope, team_id, user_id, shortcut, language, body, created_at, updated_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)"
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(valid.scope.as_str())
        .bind(&valid.team_id)
        .bind(&valid.user_id)
        .bind(&valid.shortcut)
        .bind(&valid.language)
        .bind(&valid.text)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))
        .map_err(taken)?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "textblock.create",
            "textblock",
            Some(&id),
        )
        .await?;
        let block = TEXT_BLOCKS
            .get_in::<TextBlockRow>(&mut tx, tenant_id, &id)
            .await?
            .into();
        tx.commit().await?;
        Ok(block)
    }

    /// Replaces a text block's fields (its uses stay).
    pub async fn update_text_block(
        &self,
        tenant_id: &TenantId,
        id: &str,
        input: TextBlockIn,
        actor: &Actor,
    ) -> CoreResult<TextBlock> {
        let valid = validate(&input)?;
        let mut tx = self.db().begin().await?;
        TEXT_BLOCKS.read_in::<(String,)>(&mut tx, tenant_id, id, "id").await?;
        check_owner(&mut tx, tenant_id, &valid).await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update text_blocks set scope = $3, team_id = $4, user_id = $5, shortcut = $6, language = $7, body = $8, \
             updated_at = $9 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .bind(valid.scope.as_str())
        .bind(&valid.team_id)
        .bind(&valid.user_id)
        .bind(&valid.shortcut)
        .bind(&valid.language)
        .bind(&valid.text)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))
        .map_err(taken)?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "textblock.update",
            "textblock",
            Some(id),
        )
        .await?;
        let block = TEXT_BLOCKS.get_in::<TextBlockRow>(&mut tx, tenant_id, id).await?.into();
        tx.commit().await?;
        Ok(block)
    }

    /// One text block.
    pub async fn get_text_block(&self, tenant_id: &TenantId, id: &str) -> CoreResult<TextBlock> {
        Ok(TEXT_BLOCKS.get::<TextBlockRow>(self.db(), tenant_id, id).await?.into())
    }

    /// Deletes a text block. Its uses stay counted in the reports.
    pub async fn delete_text_block(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        TEXT_BLOCKS.read_in::<(String,)>(&mut tx, tenant_id, id, "id").await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "delete from text_blocks where tenant_id = $1 and id = $2"
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
            "textblock.delete",
            "textblock",
            Some(id),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// A page of the tenant's text blocks, by shortcut and language.
    pub async fn list_text_blocks(
        &self,
        tenant_id: &TenantId,
        filter: &TextBlockFilter,
        page_request: &PageRequest,
    ) -> CoreResult<Page<TextBlock>> {
        let paging = Paging::from_request(page_request)?;
        let rows_of = "from text_blocks where tenant_id = $1 \
             and ($2 is null or shortcut like $2 escape '\\') \
             and ($3 is null or coalesce(language, '') = $3) \
             and ($4 is null or scope = $4)";
        let prefix = filter
            .shortcut
            .as_deref()
            .map(|s| format!("{}%", s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")));
        let args = [
            Arg::from(tenant_id),
            Arg::from(prefix),
            Arg::from(filter.language.clone()),
            Arg::from(filter.scope.map(|s| s.as_str())),
        ];
        let (total, rows): (i64, Vec<TextBlockRow>) = page(
            self.db(),
            &format!("select count(*) {rows_of}"),
            &format!(
                "select {} {rows_of} order by shortcut, coalesce(language, ''), id limit $5 offset $6",
                TEXT_BLOCKS.columns
            ),
            &args,
            &paging,
        )
        .await?;
        Ok(paging.page(total, rows.into_iter().map(TextBlock::from).collect()))
    }

    /// The blocks `user_id` may insert in `customer_id`'s conversation: per
    /// shortcut the best fit ([`best_fit`]), filled in for this customer and
    /// this agent, by shortcut.
    pub async fn text_block_choices(
        &self,
        tenant_id: &TenantId,
        user_id: &UserId,
        customer_id: &CustomerId,
    ) -> CoreResult<Vec<TextBlockChoice>> {
        let customer = self.get_customer(tenant_id, customer_id).await?;
        let sql = format!(
            "select {} from text_blocks b where b.tenant_id = $1 and (b.scope = 'TENANT' \
               or (b.scope = 'USER' and b.user_id = $2) \
               or (b.scope = 'TEAM' and b.team_id in (select team_id from team_members where user_id = $2)))",
            TEXT_BLOCKS.columns
        );
        let rows: Vec<TextBlockRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(user_id)
            .fetch_all(pool)
            .await)?;
        let blocks: Vec<TextBlock> = rows.into_iter().map(TextBlock::from).collect();
        let workspace = self.engine_settings(tenant_id).await?.language;
        let agent = self.user_names(tenant_id, &[user_id]).await?.remove(user_id.as_str());
        let variables = Variables {
            customer_first_name: customer.first_name.clone(),
            customer_last_name: customer.last_name.clone(),
            agent_display_name: agent,
        };
        Ok(best_fit(&blocks, customer.language.as_deref(), &workspace)
            .into_iter()
            .map(|b| TextBlockChoice {
                id: b.id.clone(),
                shortcut: b.shortcut.clone(),
                language: b.language.clone(),
                scope: b.scope,
                text: render(&b.text, &variables),
            })
            .collect())
    }
}

/// Counts a message sent from block `id` (inside the send's transaction): the
/// block's `uses`, and a `TEXT_BLOCK_USED` fact for the message report, by the
/// sending agent. A block that is not the tenant's is refused (422
/// `unknown_reference` at `textBlockId`).
pub(crate) async fn record_use(
    tx: &mut Tx,
    tenant_id: &TenantId,
    id: &str,
    message_id: &str,
    agent: Option<&str>,
    at: i64,
) -> CoreResult<()> {
    let updated = with_tx!(tx, |conn| sqlx::query(
        "update text_blocks set uses = uses + 1 where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    if updated == 0 {
        return Err(CoreError::invalid(
            "textBlockId",
            "unknown_reference",
            "textBlockId names no text block of this workspace",
        ));
    }
    facts::record(
        tx,
        tenant_id,
        &facts::Fact {
            kind: TEXT_BLOCK_USED,
            at,
            value: 1,
            agent,
            dim: Some(id),
            subject: None,
            tags: &[],
            dedupe: Some(message_id),
        },
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_pattern_names_every_variable() {
        for name in VARIABLES {
            assert!(TEXT_PATTERN.contains(&name.replace('.', "\\.")), "{name}");
        }
    }

    #[test]
    fn text_naming_an_unknown_variable_is_refused() {
        let input = |text: &str| TextBlockIn {
            shortcut: Some("hi".into()),
            text: Some(text.into()),
            ..Default::default()
        };
        assert!(validate(&input("Hi {customer.firstName|there}")).is_ok());
        let Err(CoreError::Validation(errors)) = validate(&input("Hi {customer.nickname}")) else {
            panic!("refused")
        };
        assert_eq!(
            (errors[0].field.as_str(), errors[0].code.as_str()),
            ("text", "unknown_variable")
        );
    }

    #[test]
    fn shortcuts_and_owners_are_checked() {
        let input = TextBlockIn {
            shortcut: Some("Hello World".into()),
            text: Some("x".into()),
            scope: Some(Scope::Team),
            user_id: Some("u1".into()),
            ..Default::default()
        };
        let Err(CoreError::Validation(errors)) = validate(&input) else {
            panic!("refused")
        };
        let found: Vec<(&str, &str)> = errors.iter().map(|e| (e.field.as_str(), e.code.as_str())).collect();
        assert_eq!(
            found,
            [
                ("shortcut", "invalid_shortcut"),
                ("teamId", "required"),
                ("userId", "not_allowed")
            ]
        );
    }
}
