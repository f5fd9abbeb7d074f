//! What a text block is on the wire: the block, its input, the list filter and
//! a block as an agent inserts it.

use serde::{Deserialize, Serialize};

use crate::ids::UserId;

/// The shape of a shortcut, as the OpenAPI document states it.
pub const SHORTCUT_PATTERN: &str = "^[a-z0-9][a-z0-9_-]{0,39}$";
/// The text a block takes, as the OpenAPI document states it: not blank, and
/// each `{` that a `}` closes on its line names one of [`super::VARIABLES`], with an
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
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Scope::Tenant => "TENANT",
            Scope::Team => "TEAM",
            Scope::User => "USER",
        }
    }

    pub(super) fn parse(text: &str) -> Scope {
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
