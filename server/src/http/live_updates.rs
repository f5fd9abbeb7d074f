//! A live room's updates as a stream, for the server-sent-event endpoints.

use std::sync::Arc;

use futures_util::Stream;
use rapport_core::live::{LiveUpdate, Subscription};

/// Every later update of the subscription's room, for as long as the stream
/// is held; a `Resync` stands for updates lost by falling behind.
pub fn updates(subscription: Subscription) -> impl Stream<Item = Arc<LiveUpdate>> + Send {
    futures_util::stream::unfold(subscription, |mut subscription| async move {
        let update = subscription.recv().await;
        Some((update, subscription))
    })
}
