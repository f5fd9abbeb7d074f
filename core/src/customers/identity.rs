//! Identity verification: whether a widget visitor is who it says it is.
//!
//! Any page can load a workspace's widget and say "I am `CRM-1042`,
//! `ceo@customer.com`". A workspace whose site knows its visitors (they signed in
//! there) proves it: the site's server signs the visitor's `externalId` and
//! `email` with the workspace's identity secret (HMAC-SHA256, see
//! [`identity_signature`]), and the page hands the signature to the widget as
//! `identitySignature`.
//!
//! - A signed identity is the customer's own: `externalId` and `email` are set,
//!   `identityVerified` is true, and a visitor whose `externalId` another
//!   customer has becomes that customer, so it continues that conversation on
//!   any device.
//! - An unsigned identity is only a claim (`claimedExternalId`,
//!   `claimedEmail`): agents see it marked as such, and nothing an integration
//!   sends to that external id reaches it.
//! - With `required` on, unsigned identities are refused (422
//!   `signature_required`); anonymous visitors still chat.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::{
    audit::{self, Actor},
    crypto::random_token,
    db::Tx,
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    sealing::Purpose,
    time::now_ms,
    validate::{is_email, Checks},
    with_db, with_tx, Services,
};

/// A workspace's identity verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IdentitySettings {
    /// Refuse visitor identities (`externalId`, `email`) without a valid
    /// `identitySignature` (422 `signature_required`).
    pub required: bool,
    /// The key the site signs identities with; `null` until one is made (by
    /// turning `required` on, or `POST /widget/identity/rotate`). Keep it on
    /// the site's server: whoever has it can sign any identity.
    pub secret: Option<String>,
}

/// A change of a workspace's identity verification.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IdentitySettingsIn {
    /// Refuse unsigned visitor identities. Turning it on makes a secret if the
    /// workspace has none.
    pub required: bool,
}

/// The signature a site gives its signed-in visitor: lowercase hex of
/// HMAC-SHA256, keyed with the workspace's identity secret, over the visitor's
/// `externalId`, a line feed, and its `email`, each exactly as the widget sends
/// them and empty when left out.
pub fn identity_signature(secret: &str, external_id: Option<&str>, email: Option<&str>) -> String {
    hex::encode(signer(secret, external_id, email).finalize().into_bytes())
}

fn signer(secret: &str, external_id: Option<&str>, email: Option<&str>) -> Hmac<Sha256> {
    // HMAC takes a key of any length; this never fails.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(external_id.unwrap_or("").as_bytes());
    mac.update(b"\n");
    mac.update(email.unwrap_or("").as_bytes());
    mac
}

/// What a visitor said of itself, checked: the values as they are kept, and
/// whether the workspace's site signed them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Claims {
    /// The site signed `external_id` and `email`.
    pub verified: bool,
    /// The external id given, trimmed.
    pub external_id: Option<String>,
    /// The e-mail address given, trimmed and in lower case.
    pub email: Option<String>,
}

impl Claims {
    /// The external id the customer may take: only a signed one.
    pub fn verified_external_id(&self) -> Option<String> {
        self.external_id.clone().filter(|_| self.verified)
    }

    /// The e-mail address the customer may take: only a signed one.
    pub fn verified_email(&self) -> Option<String> {
        self.email.clone().filter(|_| self.verified)
    }

    /// An external id that stays a claim.
    pub fn unverified_external_id(&self) -> Option<&str> {
        self.external_id.as_deref().filter(|_| !self.verified)
    }

    /// An e-mail address that stays a claim.
    pub fn unverified_email(&self) -> Option<&str> {
        self.email.as_deref().filter(|_| !self.verified)
    }
}

/// A widget visitor whose customer is being created.
pub(crate) struct NewVisitor<'a> {
    /// Digest of its visitor token.
    pub token_hash: &'a str,
    /// The page it is on (checked).
    pub page_url: Option<&'a str>,
    /// What it said of itself.
    pub claims: &'a Claims,
}

/// Gives customer `customer_id` one more visitor token (a device).
pub(crate) async fn add_visitor_token(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    token_hash: &str,
) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "insert into visitor_tokens (token_hash, tenant_id, customer_id, created_at) values ($1, $2, $3, $4)"
    )
    .bind(token_hash)
    .bind(tenant_id)
    .bind(customer_id)
    .bind(now_ms())
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Moves a visitor token to another customer of the tenant (a visitor proved
/// it is that customer).
pub(crate) async fn move_visitor_token(
    tx: &mut Tx,
    tenant_id: &TenantId,
    token_hash: &str,
    customer_id: &CustomerId,
) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "update visitor_tokens set customer_id = $3 where tenant_id = $1 and token_hash = $2"
    )
    .bind(tenant_id)
    .bind(token_hash)
    .bind(customer_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Keeps what a visitor said of itself on its customer: whether it is
/// verified, and the claims that stay claims. A signed value replaces the
/// claim of the same field; a field left out keeps its claim.
pub(crate) async fn keep_claims(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer: &super::Customer,
    claims: &Claims,
) -> CoreResult<()> {
    let settle = |given: &Option<String>, held: &Option<String>| match given {
        Some(value) if !claims.verified => Some(value.clone()),
        Some(_) => None,
        None => held.clone(),
    };
    let email = settle(&claims.email, &customer.claimed_email);
    let external_id = settle(&claims.external_id, &customer.claimed_external_id);
    let verified = customer.identity_verified || claims.verified;
    with_tx!(tx, |conn| sqlx::query(
        "update customers set identity_verified = $3, claimed_email = $4, claimed_external_id = $5 \
         where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(&customer.id)
    .bind(verified)
    .bind(&email)
    .bind(&external_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

impl Services {
    /// The workspace's identity verification.
    pub async fn identity_settings(&self, tenant_id: &TenantId) -> CoreResult<IdentitySettings> {
        let row: Option<(bool, Option<String>)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select identity_required, identity_secret from tenants where id = $1"
        )
        .bind(tenant_id)
        .fetch_optional(pool)
        .await)?;
        let (required, secret) = row.ok_or(CoreError::NotFound("tenant"))?;
        let secret = secret
            .map(|s| self.sealer().open(Purpose::IdentitySecret, &s))
            .transpose()?;
        Ok(IdentitySettings { required, secret })
    }

    /// Turns the refusal of unsigned identities on or off; on, it makes a
    /// secret if the workspace has none. Audited.
    pub async fn set_identity_settings(
        &self,
        tenant_id: &TenantId,
        input: IdentitySettingsIn,
        actor: &Actor,
    ) -> CoreResult<IdentitySettings> {
        let fresh = self.sealer().seal(Purpose::IdentitySecret, &new_identity_secret());
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update tenants set identity_required = $2, \
             identity_secret = case when $2 then coalesce(identity_secret, $3) else identity_secret end where id = $1"
        )
        .bind(tenant_id)
        .bind(input.required)
        .bind(&fresh)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "identity.update",
            "tenant",
            Some(tenant_id),
        )
        .await?;
        tx.commit().await?;
        self.identity_settings(tenant_id).await
    }

    /// Replaces the identity secret; signatures made with the old one fail
    /// from now on. Audited (without the secret).
    pub async fn rotate_identity_secret(&self, tenant_id: &TenantId, actor: &Actor) -> CoreResult<IdentitySettings> {
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update tenants set identity_secret = $2 where id = $1"
        )
        .bind(tenant_id)
        .bind(self.sealer().seal(Purpose::IdentitySecret, &new_identity_secret()))
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "identity.rotate_secret",
            "tenant",
            Some(tenant_id),
        )
        .await?;
        tx.commit().await?;
        self.identity_settings(tenant_id).await
    }

    /// Checks what a visitor says of itself: the values (as a customer's
    /// fields are checked), then the signature. A wrong signature is 422
    /// `signature_mismatch`; none, where the workspace requires one, 422
    /// `signature_required`, both on `identitySignature`.
    pub(crate) async fn check_claims(
        &self,
        tenant_id: &TenantId,
        external_id: Option<&str>,
        email: Option<&str>,
        signature: Option<&str>,
    ) -> CoreResult<Claims> {
        let mut checks = Checks::new();
        let kept_id = checks.optional_text("externalId", external_id, 200);
        let kept_email = checks.optional_text("email", email, 254).map(|e| e.to_lowercase());
        if kept_email.as_deref().is_some_and(|e| !is_email(e)) {
            checks.push("email", "invalid_email", "email must be an e-mail address");
        }
        let signature = checks.optional_text("identitySignature", signature, 128);
        checks.finish()?;
        let claims = |verified| Claims {
            verified,
            external_id: kept_id.clone(),
            email: kept_email.clone(),
        };
        if kept_id.is_none() && kept_email.is_none() {
            return Ok(claims(false));
        }
        let settings = self.identity_settings(tenant_id).await?;
        let Some(signature) = signature else {
            if settings.required {
                return Err(CoreError::invalid(
                    "identitySignature",
                    "signature_required",
                    "this workspace takes only signed identities: send identitySignature, the HMAC-SHA256 of externalId and email with the workspace's identity secret",
                ));
            }
            return Ok(claims(false));
        };
        let valid = settings.secret.as_deref().is_some_and(|secret| {
            hex::decode(signature.to_ascii_lowercase())
                .is_ok_and(|bytes| signer(secret, external_id, email).verify_slice(&bytes).is_ok())
        });
        if !valid {
            return Err(CoreError::invalid(
                "identitySignature",
                "signature_mismatch",
                "identitySignature is not the HMAC-SHA256 of this externalId and email with the workspace's identity secret",
            ));
        }
        Ok(claims(true))
    }
}

fn new_identity_secret() -> String {
    format!("is_{}", random_token(32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_cover_both_fields_and_their_order() {
        let sig = identity_signature("is_secret", Some("CRM-1042"), Some("eve@example.com"));
        assert_eq!(sig.len(), 64);
        assert_eq!(
            sig,
            identity_signature("is_secret", Some("CRM-1042"), Some("eve@example.com"))
        );
        assert_ne!(sig, identity_signature("is_secret", Some("CRM-1042"), None));
        assert_ne!(
            sig,
            identity_signature("is_other", Some("CRM-1042"), Some("eve@example.com"))
        );
        // The line feed keeps the fields apart: "a\nb" is not "a" + "\nb".
        assert_ne!(
            identity_signature("k", Some("a"), Some("b")),
            identity_signature("k", Some("a\nb"), None)
        );
        // A known answer, computed with Python's hmac module, so that sites in
        // other languages can check theirs.
        assert_eq!(
            identity_signature("key", Some("CRM-1"), Some("eve@example.com")),
            "0bfbe1c5fa32590a147b008dbde3bd0ae64cdeaad64a0dbc53d92577aeef6e9b"
        );
    }

    #[test]
    fn only_signed_values_leave_the_claims() {
        let signed = Claims {
            verified: true,
            external_id: Some("CRM-1".into()),
            email: None,
        };
        assert_eq!(signed.verified_external_id().as_deref(), Some("CRM-1"));
        assert_eq!(signed.unverified_external_id(), None);
        let claimed = Claims {
            verified: false,
            ..signed
        };
        assert_eq!(claimed.verified_external_id(), None);
        assert_eq!(claimed.unverified_external_id(), Some("CRM-1"));
    }
}
