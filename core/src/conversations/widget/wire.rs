//! What the widget and the visitor script send and are answered, on the wire:
//! a visitor's message, start, profile and tags, and the widget's settings.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    config::rules::action::AgentsNow,
    conversations::messages::{self, MessageType},
    customers::CustomerIn,
    ids::CustomerId,
};

/// What a visitor sends through the widget: the content part of [`crate::conversations::MessageIn`].
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetMessageIn {
    /// `MESSAGE` (default), `AUDIO`, `VIDEO` or `FILE`; visitors cannot send `CARD`.
    #[serde(rename = "type")]
    pub kind: Option<MessageType>,
    /// The text; required for `MESSAGE` (at most 10,000 characters).
    #[schema(max_length = 10000)]
    pub message: Option<String>,
    /// Required for `AUDIO`, `VIDEO` and `FILE`: the download link of a file
    /// this visitor uploaded (the `url` of the message `POST /widget/file`
    /// answered); any other URL is 422 `not_uploaded`.
    #[schema(format = "uri", max_length = 2048)]
    pub url: Option<String>,
    /// The page the visitor is on now (an http(s) URL); kept on the customer for
    /// `URL` routing conditions. Our extension.
    #[schema(format = "uri", max_length = 2048)]
    pub page_url: Option<String>,
    /// The visitor's language now, a BCP 47 tag (`de-CH`); kept on the customer.
    /// Our extension.
    #[schema(
        max_length = 35,
        pattern = r"^\s*$|^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-[0-9A-WY-Za-wy-z](-[A-Za-z0-9]{2,8})+)*(-[Xx](-[A-Za-z0-9]{1,8})+)?$",
        example = "de-CH"
    )]
    pub language: Option<String>,
    /// The action rule whose proactive message (`OPEN_CHAT`) this answers: the
    /// rule's message, or its flow's messages, are stored in the conversation
    /// first, as the system's. A rule that is gone, switched off or opens no
    /// message is ignored, and the message is stored alone. Our extension.
    #[schema(max_length = 200)]
    pub action_rule_id: Option<String>,
}

/// A visitor starting: the profile it gives (the customer's fields; an `id` or
/// an assignment is ignored) and the page it is on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"firstName": "Eve", "language": "de-CH", "pageUrl": "https://shop.example.com/checkout"}))]
pub struct VisitorIn {
    /// The visitor's profile.
    #[serde(flatten)]
    pub profile: CustomerIn,
    /// The page the visitor is on (an http(s) URL), for `URL` routing
    /// conditions. Our extension.
    #[schema(format = "uri", max_length = 2048)]
    pub page_url: Option<String>,
    /// The site's signature of `externalId` and `email` (identity
    /// verification, `GET /widget/identity`): lowercase hex HMAC-SHA256. Without
    /// it they are only claims.
    #[schema(max_length = 128)]
    pub identity_signature: Option<String>,
}

/// The visitor names itself (`Rapport('identify', …)`): the customer's fields
/// and, for `externalId` and `email` to count, the site's signature.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"externalId": "CRM-1042", "email": "eve@example.com", "firstName": "Eve"}))]
pub struct VisitorProfileIn {
    /// The visitor's profile.
    #[serde(flatten)]
    pub profile: CustomerIn,
    /// The site's signature of `externalId` and `email`: lowercase hex
    /// HMAC-SHA256 with the workspace's identity secret over `externalId`, a
    /// line feed and `email`, each as sent and empty when left out.
    #[schema(max_length = 128)]
    pub identity_signature: Option<String>,
}

/// Who the visitor is after naming itself.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VisitorProfile {
    /// The visitor's customer: another one than before when a signed
    /// `externalId` named a customer the workspace already had, whose
    /// conversation the visitor continues (its token now stands for it).
    #[schema(value_type = String)]
    pub customer_id: CustomerId,
    /// Whether the customer's identity was signed by the site.
    pub identity_verified: bool,
}

/// Tags the visitor script gives its visitor.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"tags": ["vip", "checkout"]}))]
pub struct VisitorTagsIn {
    /// Tags to add (1–50, unique, each 1–64 characters); tags the visitor has
    /// already are kept, and at most 50 in all.
    #[serde(default)]
    #[schema(value_type = Vec<crate::validate::Tag>, required = true, min_items = 1, max_items = 50)]
    pub tags: Vec<String>,
}

/// A visitor's tags after a change.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VisitorTags {
    /// Every tag the visitor's pages have set (the customer's `pageTags`;
    /// tags agents and integrations set are not shown to the page).
    #[schema(value_type = Vec<crate::validate::Tag>)]
    pub tags: Vec<String>,
}

impl WidgetMessageIn {
    /// The fields each `type` needs, and the refusal of `CARD`, as JSON Schema
    /// conditions (what [`crate::Services::visitor_message`] checks).
    pub fn schema_conditions() -> serde_json::Value {
        let mut conditions = messages::content_conditions(true);
        if let Some(list) = conditions.as_array_mut() {
            list.push(serde_json::json!({"not": {"required": ["type"], "properties": {"type": {"const": "CARD"}}}}));
        }
        conditions
    }
}

/// What the widget learns when a visitor starts: who it is, and the secret that
/// proves it on later requests.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VisitorIdentity {
    /// The customer the visitor is.
    #[schema(value_type = String)]
    pub customer_id: CustomerId,
    /// Bearer token of this visitor (shown once; store it in the browser).
    pub visitor_token: String,
}

/// What the widget needs before it shows anything.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetConfig {
    /// Whether the workspace is open now, by its business hours (Settings →
    /// Workspace, `businessHoursId`: holidays and the zone included). Without
    /// business hours it is always open. Closed, the widget shows the offline form.
    pub open: bool,
    /// When `open` next changes, if it ever does.
    pub next_change_at: Option<DateTime<Utc>>,
    /// The workspace's default language (BCP 47), for clients that build their
    /// own chat. Rapport's widget speaks the first of the browser's languages it
    /// has (English, German, Japanese, Ukrainian, Russian), else English.
    pub language: String,
    /// What the script records of the visitor's pages.
    pub recording: RecordingConfig,
    /// The largest file a visitor may send (`POST /widget/file`), in bytes; 0
    /// when this server takes no files.
    pub max_file_bytes: u64,
    /// Whether agents are online and have room now: what the action rules'
    /// `AGENT_ONLINE`, `AGENTS_OFFLINE` and `AGENTS_BUSY` conditions test.
    pub agents: AgentsNow,
}

/// What the visitor script records (the workspace's recording settings, as the
/// script needs them).
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordingConfig {
    /// Whether to record sessions at all.
    pub enabled: bool,
    /// Record only after the visitor's `Rapport('consent', true)`.
    pub require_consent: bool,
    /// CSS selector of text to mask, besides every input and `.rapport-mask`.
    pub mask_selector: Option<String>,
    /// CSS selector of elements to leave out, besides `.rapport-block`.
    pub block_selector: Option<String>,
}
