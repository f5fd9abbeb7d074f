//! What a customer is on the wire: the customer, its input, its assignment
//! and the body of `customer.deleted`.

use serde::{Deserialize, Serialize};

use crate::ids::{CustomerId, UserId};

/// Most tags on one customer.
pub const MAX_CUSTOMER_TAGS: usize = 50;

/// Gender, as the spec spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Gender {
    /// female
    Female,
    /// other
    Other,
    /// male
    Male,
    /// none
    None,
}

impl Gender {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Gender::Female => "female",
            Gender::Other => "other",
            Gender::Male => "male",
            Gender::None => "none",
        }
    }

    pub(super) fn parse(s: &str) -> Option<Gender> {
        [Gender::Female, Gender::Other, Gender::Male, Gender::None]
            .into_iter()
            .find(|g| g.as_str() == s)
    }
}

/// A customer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Customer {
    /// Unique id.
    #[schema(value_type = String)]
    pub id: CustomerId,
    /// E-mail address.
    pub email: Option<String>,
    /// First name.
    pub first_name: Option<String>,
    /// Last name.
    pub last_name: Option<String>,
    /// `female`, `other`, `male` or `none`.
    pub gender: Option<Gender>,
    /// The client's own id for this customer, unique in the tenant.
    pub external_id: Option<String>,
    /// Id of the user the customer is assigned to.
    pub assigned_user: Option<String>,
    /// Id of the team the customer is assigned to (exclusive with `assignedUser`).
    pub assigned_team: Option<String>,
    /// Tags, which routing and SLA rules match (`HAS_TAG`); our extension.
    #[schema(value_type = Vec<crate::validate::Tag>, max_items = 50)]
    pub tags: Vec<String>,
    /// The customer's language, a BCP 47 tag (`de-CH`): routing rules send system
    /// messages in it. Our extension.
    pub language: Option<String>,
    /// The page the visitor was last on, as the widget reported it (`URL`
    /// routing conditions match it). Our extension; read-only here.
    pub page_url: Option<String>,
    /// Tags the visitor's page set (the visitor script's `tag`), kept apart
    /// from `tags` because any page can set them. `HAS_TAG` conditions say
    /// which they read. Our extension; read-only here.
    #[schema(value_type = Vec<crate::validate::Tag>, max_items = 50)]
    pub page_tags: Vec<String>,
    /// Whether the visitor's `externalId` and `email` were signed by the
    /// workspace's site (identity verification, `GET /widget/identity`). Our
    /// extension; read-only here.
    pub identity_verified: bool,
    /// An e-mail address the visitor gave without a valid signature: only a
    /// claim, never the customer's `email`. Our extension; read-only here.
    pub claimed_email: Option<String>,
    /// An external id the visitor gave without a valid signature: only a
    /// claim, which no message to that external id reaches. Our extension;
    /// read-only here.
    pub claimed_external_id: Option<String>,
    /// When the customer was created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When the customer was last changed.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// Input to create, override or update a customer (spec 2.1).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"email": "eve@example.com", "firstName": "Eve", "lastName": "Ng", "gender": "female", "externalId": "crm-1042", "assignedUser": "agent@example.com"}))]
pub struct CustomerIn {
    /// Optional id of an existing customer to override (create/override); unknown ids are 404.
    pub id: Option<String>,
    /// E-mail address.
    #[schema(format = Email, max_length = 254)]
    pub email: Option<String>,
    /// First name (at most 200 characters).
    #[schema(max_length = 200)]
    pub first_name: Option<String>,
    /// Last name (at most 200 characters).
    #[schema(max_length = 200)]
    pub last_name: Option<String>,
    /// `female`, `other`, `male` or `none`.
    pub gender: Option<Gender>,
    /// The client's own id, unique in the tenant (at most 200 characters).
    #[schema(max_length = 200)]
    pub external_id: Option<String>,
    /// Id or e-mail of a user of this tenant to assign the customer to.
    pub assigned_user: Option<String>,
    /// Id of a team of this tenant to assign the customer to (not with `assignedUser`).
    pub assigned_team: Option<String>,
    /// Our extension: tags (unique, at most 50, each 1–64 characters). They replace
    /// the customer's tags; omitted, the customer keeps its tags; `[]` removes them.
    #[schema(value_type = Option<Vec<crate::validate::Tag>>, max_items = 50)]
    pub tags: Option<Vec<String>>,
    /// Our extension: a BCP 47 language tag (`en`, `de-CH`). Omitted, the customer
    /// keeps its language; an empty string removes it.
    #[schema(
        max_length = 35,
        pattern = r"^\s*$|^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-[0-9A-WY-Za-wy-z](-[A-Za-z0-9]{2,8})+)*(-[Xx](-[A-Za-z0-9]{1,8})+)?$",
        example = "de-CH"
    )]
    pub language: Option<String>,
}

impl CustomerIn {
    /// `assignedUser` and `assignedTeam` exclude each other, as a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{"not": {"required": ["assignedUser", "assignedTeam"]}}])
    }
}

/// Assignment of a customer: a user, a team, or (both omitted) nobody.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    /// Id or e-mail of a user of this tenant.
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
    /// Id of a team of this tenant (not with `userId`).
    pub team_id: Option<String>,
}

impl Assignment {
    /// `userId` and `teamId` exclude each other, as a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{"not": {"required": ["userId", "teamId"]}}])
    }
}

/// The body of `customer.deleted`: whom integrators should forget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerErased {
    /// The customer's id.
    pub id: String,
    /// The id the customer had in the integrator's system, if any.
    pub external_id: Option<String>,
}
