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
mod types;
mod validation;

pub use fill::{best_fit, render, Variables, VARIABLES};
pub use types::{
    Scope, TextBlock, TextBlockChoice, TextBlockFilter, TextBlockIn, MAX_TEXT, SHORTCUT_PATTERN, TEXT_PATTERN,
};
use validation::{check_owner, taken, validate};

use crate::{
    audit::{self, Actor},
    db::{page, Arg, TenantTable, Tx},
    error::{CoreError, CoreResult},
    ids::{CustomerId, MessageId, TenantId, UserId},
    model::{Page, PageRequest},
    reports::{catalogue::TEXT_BLOCK_USED, facts},
    time::{from_ms, now_ms},
    validate::Paging,
    with_db, with_tx, Services,
};

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
    message_id: &MessageId,
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
