//! What a workspace records of its visitors' pages, and for how long: read by
//! the visitor script when it starts, set by admins (audited).

use serde::{Deserialize, Serialize};

use super::*;

/// What a workspace records of its visitors' pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordingSettings {
    /// Whether the visitor script records sessions (default true).
    pub enabled: bool,
    /// Record only visitors who consented (`Rapport('consent', true)`; default false).
    pub require_consent: bool,
    /// CSS selector of text the recording masks, besides every input (always
    /// masked) and elements with the class `rapport-mask`.
    pub mask_selector: Option<String>,
    /// CSS selector of elements left out of the recording (shown as an empty
    /// box), besides those with the class `rapport-block`.
    pub block_selector: Option<String>,
    /// Days a recording is kept after its last event (1–365, default 30).
    #[schema(minimum = 1, maximum = 365)]
    pub retention_days: i64,
    /// Days a recording of an appointment's video call is kept after the
    /// call (1–3650, default 90).
    #[schema(minimum = 1, maximum = 3650)]
    pub conference_retention_days: i64,
}

/// A change of [`RecordingSettings`]; omitted fields are kept, an empty selector
/// removes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordingSettingsIn {
    /// Whether the visitor script records sessions.
    pub enabled: Option<bool>,
    /// Record only visitors who consented.
    pub require_consent: Option<bool>,
    /// CSS selector of text to mask (at most 1000 characters; `""` removes it).
    #[schema(max_length = 1000)]
    pub mask_selector: Option<String>,
    /// CSS selector of elements to leave out (at most 1000 characters; `""` removes it).
    #[schema(max_length = 1000)]
    pub block_selector: Option<String>,
    /// Days a recording is kept after its last event (1–365).
    #[schema(minimum = 1, maximum = 365)]
    pub retention_days: Option<i64>,
    /// Days a recording of an appointment's video call is kept (1–3650).
    #[schema(minimum = 1, maximum = 3650)]
    pub conference_retention_days: Option<i64>,
}

impl Services {
    /// The workspace's recording settings.
    pub async fn recording_settings(&self, tenant_id: &TenantId) -> CoreResult<RecordingSettings> {
        let row: Option<SettingsRow> = with_db!(self.db(), |pool| sqlx::query_as(
            "select recording_enabled, recording_consent_required, recording_mask_selector, \
             recording_block_selector, recording_retention_days, conference_retention_days \
             from tenants where id = $1"
        )
        .bind(tenant_id)
        .fetch_optional(pool)
        .await)?;
        let (enabled, require_consent, mask_selector, block_selector, retention_days, conference_retention_days) =
            row.ok_or(CoreError::NotFound("tenant"))?;
        Ok(RecordingSettings {
            enabled,
            require_consent,
            mask_selector,
            block_selector,
            retention_days,
            conference_retention_days,
        })
    }
    /// Changes the workspace's recording settings (audited as `recording.settings`).
    pub async fn set_recording_settings(
        &self,
        tenant_id: &TenantId,
        input: RecordingSettingsIn,
        actor: &Actor,
    ) -> CoreResult<RecordingSettings> {
        let current = self.recording_settings(tenant_id).await?;
        let mut checks = Checks::new();
        let mut selector = |field: &str, given: Option<String>, current: Option<String>| match given {
            None => current,
            Some(s) if s.trim().is_empty() => None,
            Some(s) => {
                let s = s.trim().to_string();
                if s.chars().count() > 1000 {
                    checks.push(field, "too_long", "at most 1000 characters");
                } else if s.contains(['{', '}', ';']) {
                    checks.push(field, "invalid_selector", "a CSS selector, without rules or `;`");
                }
                Some(s)
            }
        };
        let mask_selector = selector("maskSelector", input.mask_selector, current.mask_selector);
        let block_selector = selector("blockSelector", input.block_selector, current.block_selector);
        let retention_days = input.retention_days.unwrap_or(current.retention_days);
        checks.in_range("retentionDays", retention_days, 1..=365);
        let conference_retention_days = input
            .conference_retention_days
            .unwrap_or(current.conference_retention_days);
        checks.in_range("conferenceRetentionDays", conference_retention_days, 1..=3650);
        checks.finish()?;
        let settings = RecordingSettings {
            enabled: input.enabled.unwrap_or(current.enabled),
            require_consent: input.require_consent.unwrap_or(current.require_consent),
            mask_selector,
            block_selector,
            retention_days,
            conference_retention_days,
        };
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update tenants set recording_enabled = $2, recording_consent_required = $3, \
             recording_mask_selector = $4, recording_block_selector = $5, recording_retention_days = $6, \
             conference_retention_days = $7 where id = $1"
        )
        .bind(tenant_id)
        .bind(settings.enabled)
        .bind(settings.require_consent)
        .bind(&settings.mask_selector)
        .bind(&settings.block_selector)
        .bind(settings.retention_days)
        .bind(settings.conference_retention_days)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "recording.settings",
            "tenant",
            Some(tenant_id),
        )
        .await?;
        tx.commit().await?;
        Ok(settings)
    }
}
