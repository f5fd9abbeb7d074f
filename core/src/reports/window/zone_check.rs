//! A cached window's promise about its tenant's zone, which the report's
//! statement confirms: when the tenant's state changed meanwhile, the window
//! is stale and the report is planned again.

use std::sync::{Mutex, PoisonError};

use crate::ids::TenantId;

/// The state a window was planned with when it came from the cache, for the
/// report's statement to confirm.
#[derive(Debug)]
pub(crate) struct ZoneCheck {
    /// The tenant.
    pub tenant_id: TenantId,
    /// [`crate::reports::zones::ZoneState::fingerprint`] of the assumed state.
    pub expected: String,
    /// Set when a statement found another state (or no tenant).
    stale: Mutex<bool>,
}

impl ZoneCheck {
    /// A check that the tenant's state is still `expected`.
    pub(crate) fn new(tenant_id: TenantId, expected: String) -> Self {
        ZoneCheck {
            tenant_id,
            expected,
            stale: Mutex::new(false),
        }
    }

    /// Records what a statement read back: `None` when the tenant is gone.
    pub fn confirm(&self, found: Option<&str>) {
        if found != Some(self.expected.as_str()) {
            *self.stale.lock().unwrap_or_else(PoisonError::into_inner) = true;
        }
    }

    pub(crate) fn is_stale(&self) -> bool {
        *self.stale.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
