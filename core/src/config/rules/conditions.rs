//! The conditions routing and SLA rules test (see the table in [`super`]).

use serde::{Deserialize, Serialize};

/// A condition of a routing or SLA rule.
// Each variant names its fields in camelCase itself (`rename_all` per variant):
// utoipa does not read serde's `rename_all_fields`, and would document snake_case
// names that the server refuses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type")]
pub enum Condition {
    /// The customer's id or external id is one of `ids`.
    #[serde(rename = "HAS_ID", rename_all = "camelCase")]
    HasId {
        /// Customer ids or external ids (1–100, unique, each 1–2048 characters).
        #[schema(min_items = 1, max_items = 100)]
        ids: Vec<String>,
    },
    /// The customer carries the tags.
    #[serde(rename = "HAS_TAG", rename_all = "camelCase")]
    HasTag {
        /// Tags (1–50, unique, each 1–64 characters).
        #[schema(value_type = Vec<crate::validate::Tag>, min_items = 1, max_items = 50)]
        tags: Vec<String>,
        /// `ANY` (default) or `ALL` of the tags.
        #[serde(default, rename = "match")]
        mode: TagMatch,
        /// Whose tags count: `ANY` (default), `TRUSTED` (set by agents and
        /// integrations: the customer's `tags`) or `PAGE` (set by the
        /// visitor's page: `pageTags`, which any page can set).
        #[serde(default, skip_serializing_if = "TagSource::is_any")]
        source: TagSource,
    },
    /// No agent answered for `seconds`.
    #[serde(rename = "NO_ANSWER", rename_all = "camelCase")]
    NoAnswer {
        /// Seconds without an answer (1–86400).
        #[schema(minimum = 1, maximum = 86400)]
        seconds: i64,
    },
    /// Inside (or outside) opening hours.
    #[serde(rename = "OPENING_HOUR", rename_all = "camelCase")]
    OpeningHour {
        /// Id of opening hours of the tenant.
        opening_hours_id: String,
        /// True: inside the hours (default); false: outside.
        #[serde(default = "yes")]
        inside: bool,
    },
    /// The conversation started on a matching URL.
    #[serde(rename = "URL", rename_all = "camelCase")]
    UrlRouting {
        /// Patterns (1–50, unique, each 1–2048 characters); `*` matches any run of characters.
        #[schema(min_items = 1, max_items = 50)]
        urls: Vec<String>,
    },
}

fn yes() -> bool {
    true
}

/// How `HAS_TAG` combines its tags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TagMatch {
    /// At least one tag.
    #[default]
    Any,
    /// Every tag.
    All,
}

/// Whose tags a `HAS_TAG` condition reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TagSource {
    /// Tags from anyone: the customer's `tags` and its `pageTags`.
    #[default]
    Any,
    /// Only tags set by agents and integrations (`tags`).
    Trusted,
    /// Only tags the visitor's page set (`pageTags`): anyone can set them, so
    /// they suit what a page says of itself ("checkout"), not privileges.
    Page,
}

impl TagSource {
    /// Whether this is the default, which a rule's JSON leaves out.
    pub fn is_any(&self) -> bool {
        *self == TagSource::Any
    }
}
