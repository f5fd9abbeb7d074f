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

mod wire;

pub use wire::{
    RecordingConfig, VisitorIdentity, VisitorIn, VisitorProfile, VisitorProfileIn, VisitorTags, VisitorTagsIn,
    WidgetConfig, WidgetMessageIn,
};

use super::messages::{Direction, Message};
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
        let now = chrono::Utc::now();
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
