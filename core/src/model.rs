//! Types shared by the server and the browser: what a tenant, a user, an API key
//! look like on the wire. Field names are camelCase, as in the interface spec.

use crate::ids::{CustomerId, TenantId, UserId};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A dashboard role. `ADMIN` is the spec's constant `roleId` for admins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Role {
    /// Manages settings: users, rules, webhooks, API keys.
    Admin,
    /// Reads reports and the audit log.
    Supervisor,
    /// Answers conversations, schedules appointments, generates links.
    Agent,
}

impl Role {
    /// Every role, most powerful first.
    pub const ALL: [Role; 3] = [Role::Admin, Role::Supervisor, Role::Agent];

    /// The wire value (`ADMIN`, `SUPERVISOR`, `AGENT`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "ADMIN",
            Role::Supervisor => "SUPERVISOR",
            Role::Agent => "AGENT",
        }
    }

    /// Parses the wire value.
    pub fn parse(value: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == value)
    }

    /// Whether this role may do what `needed` may do. Admins may do everything a
    /// supervisor may, and supervisors everything an agent may.
    pub fn includes(self, needed: Role) -> bool {
        self.rank() >= needed.rank()
    }

    fn rank(self) -> u8 {
        match self {
            Role::Admin => 3,
            Role::Supervisor => 2,
            Role::Agent => 1,
        }
    }

    /// A label for people.
    pub fn label(self) -> &'static str {
        match self {
            Role::Admin => "Admin",
            Role::Supervisor => "Supervisor",
            Role::Agent => "Agent",
        }
    }
}

/// A tenant: one organisation using Rapport.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Tenant {
    /// Unique id.
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub id: TenantId,
    /// Display name.
    pub name: String,
    /// URL-safe unique handle, used at login and in the CLI.
    pub slug: String,
    /// IANA time zone, e.g. `Europe/Berlin`; report buckets are cut in it.
    pub timezone: String,
    /// When the tenant was created.
    pub created_at: DateTime<Utc>,
    /// Default language, a BCP 47 tag (default `en`): system messages go out in it
    /// when none exists in the customer's language.
    #[cfg_attr(feature = "server", schema(example = "en"))]
    pub language: String,
    /// Default agent capacity, 1–100 (default 5): how many open conversations an
    /// agent without a `maxConcurrentChats` of their own is given at once.
    #[cfg_attr(feature = "server", schema(minimum = 1, maximum = 100, example = 5))]
    pub max_chats: i64,
    /// Id of the tenant's business hours: SLA clocks count only while they are
    /// open, and outside them the chat shows its offline form and visitors
    /// cannot ask for a call. `null`: open around the clock.
    pub business_hours_id: Option<String>,
    /// Whether the chat asks visitors to rate a conversation once it is closed
    /// (CSAT, 1–5 and a comment); default true.
    pub csat_enabled: bool,
    /// Whether agents see what a visitor types before it is sent (the draft
    /// beside "typing…"); default true. Off, agents see only that the visitor
    /// is typing.
    pub typing_preview: bool,
    /// Whether a conversation's transcript is mailed to the customer's
    /// `email` when it is marked done; default false.
    pub transcript_on_close: bool,
    /// After how many minutes an agent's reply that no page has carried (the
    /// visitor has left) goes by mail to the customer, with a link that
    /// continues the chat; 0: never. Default 5.
    #[cfg_attr(feature = "server", schema(minimum = 0, maximum = 1440, example = 5))]
    pub reply_by_mail_minutes: i64,
}

/// The signed-in dashboard user, as the UI needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionUser {
    /// User id.
    pub id: UserId,
    /// E-mail address.
    pub email: String,
    /// Name shown in the UI.
    pub display_name: Option<String>,
    /// Role within the tenant.
    pub role: Role,
    /// Whether the user is an installation-level platform admin.
    pub platform_admin: bool,
    /// The user's tenant.
    pub tenant_id: TenantId,
    /// The tenant's name.
    pub tenant_name: String,
}

impl SessionUser {
    /// The name to show: the display name, or the e-mail address.
    pub fn name(&self) -> &str {
        self.display_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(&self.email)
    }
}

/// One of a user's signed-in dashboard sessions (a browser), as their
/// account page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInSession {
    /// A handle of the session (not its token): what ending it names.
    pub id: String,
    /// The browser and system, e.g. "Chrome 156 on Linux", when known.
    pub device: Option<String>,
    /// The address it signed in from, when known.
    pub ip: Option<String>,
    /// When it signed in.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it was last used (to the minute).
    pub last_seen_at: chrono::DateTime<chrono::Utc>,
    /// When it ends unless used again: 7 days unused, 30 days after sign-in at most.
    pub ends_at: chrono::DateTime<chrono::Utc>,
    /// Whether it is the session asking.
    pub current: bool,
}

/// What kind of principal an API key authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyKind {
    /// Reaches one tenant's data.
    Tenant,
    /// Manages tenants; reaches no tenant's data.
    Platform,
}

impl ApiKeyKind {
    /// Storage value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKeyKind::Tenant => "tenant",
            ApiKeyKind::Platform => "platform",
        }
    }

    /// Resource type in the audit log.
    pub fn as_str_resource(self) -> &'static str {
        match self {
            ApiKeyKind::Tenant => "apikey",
            ApiKeyKind::Platform => "platformkey",
        }
    }
}

/// An API key as listed: never the token itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    /// Unique id.
    pub id: String,
    /// What the key is for, chosen by its creator.
    pub name: String,
    /// The first characters of the token, to recognise it.
    pub prefix: String,
    /// Tenant or platform key.
    pub kind: ApiKeyKind,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last authenticated a request (updated at most once a minute).
    pub last_used_at: Option<DateTime<Utc>>,
    /// When it was revoked; a revoked key authenticates nothing.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A freshly created API key: the only time the token is ever shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedApiKey {
    /// The stored key.
    pub key: ApiKey,
    /// The secret token. Store it now: it cannot be shown again.
    pub token: String,
}

/// The paging part of a list request (spec 2.14's `Pageable`, reduced to what a
/// list needs). `pageNumber` counts from 0. `offset`, when given, wins over
/// `pageNumber`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema, utoipa::IntoParams))]
#[cfg_attr(feature = "server", into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase")]
pub struct PageRequest {
    /// Page to return, counting from 0. Default 0.
    #[cfg_attr(feature = "server", param(minimum = 0), schema(minimum = 0))]
    pub page_number: Option<i64>,
    /// Items per page: 1 to [`PageRequest::MAX_PAGE_SIZE`]. Default 20.
    #[cfg_attr(
        feature = "server",
        param(minimum = 1, maximum = 200),
        schema(minimum = 1, maximum = 200)
    )]
    pub page_size: Option<i64>,
    /// Items to skip; overrides `pageNumber` when given.
    #[cfg_attr(feature = "server", param(minimum = 0), schema(minimum = 0))]
    pub offset: Option<i64>,
}

impl PageRequest {
    /// Default page size.
    pub const DEFAULT_PAGE_SIZE: i64 = 20;
    /// Largest accepted page size; past it a request is rejected, not clamped.
    pub const MAX_PAGE_SIZE: i64 = 200;
}

/// Where a page sits in the whole list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    /// This page's number, counting from 0.
    pub page_number: i64,
    /// Requested page size.
    pub page_size: i64,
    /// Items skipped before this page.
    pub offset: i64,
    /// Items in the whole list.
    pub total_elements: i64,
    /// Pages in the whole list.
    pub total_pages: i64,
}

/// A page of results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    /// Where this page sits.
    pub page: PageInfo,
    /// The items.
    pub results: Vec<T>,
}

/// One routing decision of the match log: why a conversation went where it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RoutingRecord {
    /// The decision's id.
    pub id: String,
    /// When it was made.
    pub at: DateTime<Utc>,
    /// The customer (conversation).
    #[cfg_attr(feature = "server", schema(value_type = String))]
    pub customer_id: CustomerId,
    /// Why routing ran: `NEW`, `REOPENED`, `NO_ANSWER`, `AGENT_OFFLINE`, `QUEUE_TIMEOUT` or
    /// `CALL_REQUESTED`.
    pub reason: String,
    /// The top-level rule that matched (an else-rule's parent), if any.
    pub rule_id: Option<String>,
    /// Names from that rule down to the rule that matched, e.g. `["VIP", "Overflow"]`.
    pub rule_names: Vec<String>,
    /// The rules tried, in order.
    pub tried: Vec<TriedRule>,
    /// What was done, in order, e.g. `QUEUE TEAM <id>: assigned to <user id>`.
    pub actions: Vec<String>,
    /// `ASSIGNED`, `QUEUED`, `MESSAGED` (only messages sent), `MATCHED` (nothing to
    /// do) or `NO_MATCH`. A queued conversation assigned later reads `ASSIGNED`.
    pub result: String,
    /// The agent it went to.
    #[cfg_attr(feature = "server", schema(value_type = Option<String>))]
    pub user_id: Option<UserId>,
}

/// A rule the routing engine tried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TriedRule {
    /// Where it sits: the top-level rule's id, then else-rule indexes (`id/0/1`).
    pub path: String,
    /// Its name.
    pub name: String,
    /// Whether its conditions held.
    pub matched: bool,
}
