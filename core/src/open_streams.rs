//! The public event streams a tenant's pages hold open on this instance.
//!
//! A visitor's chat stream, a recording's control stream and a live view each
//! hold a connection and a subscription for as long as the page stays open, so
//! what one idle stream costs is paid by the instance that holds it. A tenant's
//! `openStreams` bound (see [`crate::limits`]) caps how many it holds here, so
//! one site's pages, busy or hostile, cannot take the memory its neighbours
//! need. The count lives in this process (a stream is a connection to it);
//! agents' own streams do not count.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use crate::{
    error::{CoreError, CoreResult},
    ids::TenantId,
};

/// Seconds a refused page waits before it tries again.
const RETRY_AFTER_SECS: u64 = 30;

/// Open public streams per tenant on this instance.
#[derive(Debug, Clone, Default)]
pub struct OpenStreams {
    counts: Arc<Mutex<HashMap<TenantId, i64>>>,
}

impl OpenStreams {
    /// Takes a place for one more stream of `tenant_id` unless it holds `limit`
    /// (the tenant's bound, which `Services::open_public_stream` reads).
    pub(crate) fn take(&self, tenant_id: &TenantId, limit: i64) -> CoreResult<StreamSlot> {
        let mut counts = self.counts.lock().expect("stream counts lock");
        let open = counts.entry(tenant_id.clone()).or_default();
        if *open >= limit {
            return Err(CoreError::AllowanceSpent {
                code: "stream_allowance_spent",
                message: format!("this workspace's pages may hold {limit} event streams open at once"),
                retry_after_secs: RETRY_AFTER_SECS,
            });
        }
        *open += 1;
        Ok(StreamSlot {
            counts: self.counts.clone(),
            tenant_id: tenant_id.clone(),
        })
    }

    /// The streams `tenant_id` holds open here.
    pub fn open(&self, tenant_id: &TenantId) -> i64 {
        self.counts
            .lock()
            .expect("stream counts lock")
            .get(tenant_id)
            .copied()
            .unwrap_or(0)
    }
}

/// One open stream's place; the place is given back when this drops, that is
/// when the stream ends or its client goes away.
#[derive(Debug)]
pub struct StreamSlot {
    counts: Arc<Mutex<HashMap<TenantId, i64>>>,
    tenant_id: TenantId,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().expect("stream counts lock");
        if let Some(open) = counts.get_mut(&self.tenant_id) {
            *open -= 1;
            if *open <= 0 {
                counts.remove(&self.tenant_id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> TenantId {
        TenantId::new(s)
    }

    #[test]
    fn a_tenant_holds_at_most_its_bound_and_gets_places_back() {
        let streams = OpenStreams::default();
        let a: Vec<StreamSlot> = (0..3).map(|_| streams.take(&id("a"), 3).unwrap()).collect();
        assert!(matches!(
            streams.take(&id("a"), 3),
            Err(CoreError::AllowanceSpent {
                code: "stream_allowance_spent",
                ..
            })
        ));
        let b = streams.take(&id("b"), 3).expect("a neighbour is not held up");
        assert_eq!((streams.open(&id("a")), streams.open(&id("b"))), (3, 1));
        drop(a);
        drop(b);
        assert_eq!((streams.open(&id("a")), streams.open(&id("b"))), (0, 0));
        assert!(
            streams.counts.lock().unwrap().is_empty(),
            "no tenant is kept without streams"
        );
        let _again = streams.take(&id("a"), 3).unwrap();
    }
}
