//! The visitor widget: a tenant's public widget key, visitors and their tokens, and
//! the messages a visitor writes and reads.
//!
//! The widget also says where the visitor is: `pageUrl` (the page it is on) and
//! `language` (the browser's), when it starts and with each message. They are kept
//! on the customer, for the `URL` routing condition and for the language of the
//! system messages rules send. The visitor script may tag its visitor
//! ([`Services::add_visitor_tags`]), for `HAS_TAG`, and name it
//! ([`Services::identify_visitor`]). Before showing anything, the widget asks
//! whether the workspace is open ([`Services::widget_config`]): closed, it offers
//! the offline form instead of a chat.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::messages::{Direction, Message, MessageType};
use crate::config::rules::action::AgentsNow;
use crate::{
    audit::{self, Actor, ActorKind},
    crypto::{random_token, token_digest},
    customers::{
        add_visitor_token, check_visitor_context, keep_claims, move_visitor_token, Claims, Customer, CustomerIn,
        NewVisitor, TagList,
    },
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    model::{Page, PageRequest},
    time::now_ms,
    validate::Checks,
    with_db, with_tx, Services,
};

/// What a visitor sends through the widget: the content part of [`MessageIn`].
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
    /// conditions (what [`Services::visitor_message`] checks).
    pub fn schema_conditions() -> serde_json::Value {
        let mut conditions = super::messages::content_conditions(true);
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

/// A new per-tenant widget key (public: it names the tenant to the widget).
pub fn new_widget_key() -> String {
    format!("wk_{}", uuid::Uuid::new_v4().simple())
}

impl Services {
    /// The tenant a widget key belongs to.
    pub async fn tenant_by_widget_key(&self, widget_key: &str) -> CoreResult<TenantId> {
        let id: Option<TenantId> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select id from tenants where widget_key = $1"
        )
        .bind(widget_key)
        .fetch_optional(pool)
        .await)?;
        id.ok_or(CoreError::Unauthenticated)
    }

    /// The tenant's widget key.
    pub async fn widget_key(&self, tenant_id: &TenantId) -> CoreResult<String> {
        let key: Option<Option<String>> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select widget_key from tenants where id = $1"
        )
        .bind(tenant_id)
        .fetch_optional(pool)
        .await)?;
        key.flatten().ok_or(CoreError::NotFound("tenant"))
    }

    /// Replaces the tenant's widget key; the old one stops working at once.
    pub async fn rotate_widget_key(&self, tenant_id: &TenantId, actor: &Actor) -> CoreResult<String> {
        let key = new_widget_key();
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update tenants set widget_key = $2 where id = $1"
        )
        .bind(tenant_id)
        .bind(&key)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "widget.rotate_key",
            "tenant",
            Some(tenant_id),
        )
        .await?;
        tx.commit().await?;
        Ok(key)
    }

    /// A new visitor of the tenant whose widget key is given: creates the customer
    /// (`customer.created`, `conversation.created`) and its visitor token. A
    /// signed `externalId` that names a customer the workspace has already
    /// gives the visitor a token of that customer instead: the same person on
    /// another device.
    pub async fn start_visitor(
        &self,
        widget_key: &str,
        input: VisitorIn,
        mut actor: Actor,
    ) -> CoreResult<(TenantId, VisitorIdentity)> {
        let tenant_id = self.tenant_by_widget_key(widget_key).await?;
        let mut checks = Checks::new();
        let (page_url, _) = check_visitor_context(&mut checks, input.page_url.as_deref(), None);
        checks.finish()?;
        let claims = self
            .check_claims(
                &tenant_id,
                input.profile.external_id.as_deref(),
                input.profile.email.as_deref(),
                input.identity_signature.as_deref(),
            )
            .await?;
        self.check_visitor_profile(&tenant_id, &input.profile).await?;
        // Each visitor is a customer row and two events: a page that starts
        // them in a loop is bounded per minute, for its own tenant only.
        let mut tx = self.db().begin().await?;
        crate::limits::spend_visitor(&mut tx, &tenant_id, now_ms()).await?;
        tx.commit().await?;
        let token = format!("vt_{}", random_token(32));
        if let Some(known) = self.customer_of_signed_id(&tenant_id, &claims).await? {
            let mut tx = self.db().begin().await?;
            add_visitor_token(&mut tx, &tenant_id, &known.id, &token_digest(&token)).await?;
            tx.commit().await?;
            actor.kind = ActorKind::Customer;
            actor.id = known.id.to_string();
            self.apply_profile(&tenant_id, &known, input.profile, &claims, &actor)
                .await?;
            return Ok((
                tenant_id,
                VisitorIdentity {
                    customer_id: known.id,
                    visitor_token: token,
                },
            ));
        }
        // A visitor may name itself, but not pick an id or an assignment, and
        // what it says of its identity counts only when signed.
        let profile = CustomerIn {
            id: None,
            assigned_user: None,
            assigned_team: None,
            email: claims.verified_email(),
            external_id: claims.verified_external_id(),
            ..input.profile
        };
        let customer_id = CustomerId::new(uuid::Uuid::now_v7().to_string());
        actor.kind = ActorKind::Customer;
        actor.id = customer_id.to_string();
        let visitor = NewVisitor {
            token_hash: &token_digest(&token),
            page_url: page_url.as_deref(),
            claims: &claims,
        };
        self.create_customer_with_id(&tenant_id, &customer_id, profile, Some(visitor), &actor)
            .await?;
        Ok((
            tenant_id,
            VisitorIdentity {
                customer_id,
                visitor_token: token,
            },
        ))
    }

    /// The customer a signed `externalId` names, if the workspace has it.
    async fn customer_of_signed_id(&self, tenant_id: &TenantId, claims: &Claims) -> CoreResult<Option<Customer>> {
        let Some(external_id) = claims.verified_external_id() else {
            return Ok(None);
        };
        match self.find_customer_by_external_id(tenant_id, &external_id).await {
            Ok(customer) => Ok(Some(customer)),
            Err(CoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether the workspace of a widget key is open now, its language, and
    /// whether agents are there.
    pub async fn widget_config(&self, widget_key: &str) -> CoreResult<WidgetConfig> {
        let tenant_id = self.tenant_by_widget_key(widget_key).await?;
        let settings = self.engine_settings(&tenant_id).await?;
        let schedule = self
            .business_schedule(&tenant_id, settings.business_hours_id.as_deref())
            .await?;
        let now = Utc::now();
        let recording = self.recording_settings(&tenant_id).await?;
        let agents = {
            let mut tx = self.db().begin().await?;
            crate::users::agents_now(&mut tx, &tenant_id).await?
        };
        Ok(WidgetConfig {
            agents,
            open: schedule.is_open(now),
            next_change_at: schedule.next_change(now),
            language: settings.language,
            max_file_bytes: self.max_file_bytes() as u64,
            recording: RecordingConfig {
                enabled: recording.enabled,
                require_consent: recording.require_consent,
                mask_selector: recording.mask_selector,
                block_selector: recording.block_selector,
            },
        })
    }

    /// The visitor script names its visitor (`Rapport.identify`): the fields given
    /// replace the customer's, the others are kept, and so are its assignment and
    /// tags. `externalId` and `email` become the customer's only when the site
    /// signed them; else they are kept as claims. A signed `externalId` that
    /// another customer has moves the visitor's token to that customer (the
    /// visitor continues its conversation); the customer left behind is deleted
    /// when the visitor had not written yet, and kept otherwise.
    pub async fn identify_visitor(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        visitor_token: &str,
        input: VisitorProfileIn,
        actor: &Actor,
    ) -> CoreResult<VisitorProfile> {
        let claims = self
            .check_claims(
                tenant_id,
                input.profile.external_id.as_deref(),
                input.profile.email.as_deref(),
                input.identity_signature.as_deref(),
            )
            .await?;
        self.check_visitor_profile(tenant_id, &input.profile).await?;
        let mut current = self.get_customer(tenant_id, customer_id).await?;
        match self.customer_of_signed_id(tenant_id, &claims).await? {
            Some(known) if known.id != current.id => {
                self.hand_visitor_over(tenant_id, &current, &known, visitor_token, actor)
                    .await?;
                current = known;
            }
            // The browser's customer is someone else, signed in before (a
            // shared computer): the new person gets a customer of their own,
            // and the other one keeps its conversation.
            None if current.identity_verified
                && current.external_id.is_some()
                && current.external_id != claims.verified_external_id() =>
            {
                current = self.new_customer_for_visitor(tenant_id, visitor_token, actor).await?;
            }
            _ => {}
        }
        let mut actor = actor.clone();
        actor.id = current.id.to_string();
        let customer = self
            .apply_profile(tenant_id, &current, input.profile, &claims, &actor)
            .await?;
        Ok(VisitorProfile {
            customer_id: customer.id,
            identity_verified: customer.identity_verified,
        })
    }

    /// Checks the fields a visitor gives of itself before anything is written,
    /// so that a refused profile moves no token and keeps no claim. Identity
    /// and assignment are not the visitor's to set, and are checked apart.
    async fn check_visitor_profile(&self, tenant_id: &TenantId, profile: &CustomerIn) -> CoreResult<()> {
        let own = CustomerIn {
            id: None,
            email: None,
            external_id: None,
            assigned_user: None,
            assigned_team: None,
            tags: None,
            ..profile.clone()
        };
        self.validate_customer(tenant_id, &own).await.map(|_| ())
    }

    /// Writes what a visitor says of itself onto its customer: the claims,
    /// then the fields (`customer.updated`). The fields were checked first
    /// ([`Self::check_visitor_profile`]).
    async fn apply_profile(
        &self,
        tenant_id: &TenantId,
        current: &Customer,
        profile: CustomerIn,
        claims: &Claims,
        actor: &Actor,
    ) -> CoreResult<Customer> {
        let mut tx = self.db().begin().await?;
        keep_claims(&mut tx, tenant_id, current, claims).await?;
        tx.commit().await?;
        let merged = CustomerIn {
            id: None,
            email: claims.verified_email().or(current.email.clone()),
            first_name: profile.first_name.or(current.first_name.clone()),
            last_name: profile.last_name.or(current.last_name.clone()),
            gender: profile.gender.or(current.gender),
            external_id: claims.verified_external_id().or(current.external_id.clone()),
            assigned_user: current.assigned_user.clone(),
            assigned_team: current.assigned_team.clone(),
            tags: None,
            language: profile.language,
        };
        self.update_customer(tenant_id, &current.id, merged, actor).await
    }

    /// An empty customer for a visitor who proved it is someone this browser's
    /// customer is not: the token moves to it (`customer.created`).
    async fn new_customer_for_visitor(
        &self,
        tenant_id: &TenantId,
        visitor_token: &str,
        actor: &Actor,
    ) -> CoreResult<Customer> {
        let id = CustomerId::new(uuid::Uuid::now_v7().to_string());
        let mut actor = actor.clone();
        actor.id = id.to_string();
        let customer = self
            .create_customer_with_id(tenant_id, &id, CustomerIn::default(), None, &actor)
            .await?;
        let mut tx = self.db().begin().await?;
        move_visitor_token(&mut tx, tenant_id, &token_digest(visitor_token), &id).await?;
        tx.commit().await?;
        Ok(customer)
    }

    /// A visitor proved it is `known`: its token moves there, and so do its
    /// recorded sessions. The customer it leaves is deleted when it holds no
    /// message (it was only this visitor, before it named itself).
    async fn hand_visitor_over(
        &self,
        tenant_id: &TenantId,
        left: &Customer,
        known: &Customer,
        visitor_token: &str,
        actor: &Actor,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        move_visitor_token(&mut tx, tenant_id, &token_digest(visitor_token), &known.id).await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update recorded_sessions set customer_id = $3 where tenant_id = $1 and customer_id = $2"
        )
        .bind(tenant_id)
        .bind(&left.id)
        .bind(&known.id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let written: i64 = with_tx!(&mut tx, |conn| sqlx::query_scalar(
            "select count(*) from messages where tenant_id = $1 and customer_id = $2"
        )
        .bind(tenant_id)
        .bind(&left.id)
        .fetch_one(conn)
        .await)?;
        tx.commit().await?;
        if written == 0 && left.external_id.is_none() {
            self.delete_customer(tenant_id, &left.id, actor).await?;
        }
        Ok(())
    }

    /// The tenant and customer a widget key and visitor token stand for.
    pub async fn visitor(&self, widget_key: &str, visitor_token: &str) -> CoreResult<(TenantId, Customer)> {
        let tenant_id = self.tenant_by_widget_key(widget_key).await?;
        let id: Option<CustomerId> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select customer_id from visitor_tokens where tenant_id = $1 and token_hash = $2"
        )
        .bind(&tenant_id)
        .bind(token_digest(visitor_token))
        .fetch_optional(pool)
        .await)?;
        let id = id.ok_or(CoreError::Unauthenticated)?;
        let customer = self.get_customer(&tenant_id, &id).await?;
        Ok((tenant_id, customer))
    }

    /// Adds tags to the visitor's customer (the visitor script's tag call).
    pub async fn add_visitor_tags(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        input: VisitorTagsIn,
        actor: &Actor,
    ) -> CoreResult<VisitorTags> {
        if input.tags.is_empty() {
            return Err(CoreError::invalid("tags", "required", "tags needs at least one tag"));
        }
        let customer = self
            .change_customer_tags(tenant_id, customer_id, TagList::Page, &input.tags, &[], actor)
            .await?;
        Ok(VisitorTags {
            tags: customer.page_tags,
        })
    }

    /// The visitor's conversation, newest first; marks the outbound messages on the
    /// page as delivered, since the widget now has them.
    pub async fn visitor_messages(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        page: &PageRequest,
    ) -> CoreResult<Page<Message>> {
        let page = self.list_messages(tenant_id, customer_id, page).await?;
        let undelivered: Vec<&str> = page
            .results
            .iter()
            .filter(|m| m.direction == Direction::Outbound && m.delivered_at.is_none())
            .map(|m| m.id.as_str())
            .collect();
        if !undelivered.is_empty() {
            self.mark_delivered(tenant_id, customer_id, &undelivered).await?;
        }
        Ok(page)
    }
}
