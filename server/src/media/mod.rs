//! Media: video conferences for appointments.
//!
//! - [`sfu`]: an SFU inside the process, on str0m. Every participant has one
//!   peer connection with it, and it forwards each one's audio and video to the
//!   others of the same conference. All media goes over one UDP port
//!   (`RAPPORT_MEDIA_ADDR`, announced as `RAPPORT_MEDIA_PUBLIC_ADDR`).
//! - [`signal`]: the WebSocket each participant talks to at
//!   `/join/{token}/ws`: who may enter (the link's validity, the password,
//!   the waiting room), the roster, and the SDP offers and answers.
//! - [`rooms`]: who is in which conference now, on this instance.
//!
//! A conference lives on one instance: the one whose SFU its participants'
//! media reaches. Behind a load balancer, route `/join/{token}` (the page and
//! its WebSocket) by the token, so that every participant of one appointment
//! reaches the same instance (see the README).

pub mod rooms;
pub mod sfu;
pub mod signal;

use tokio::sync::OnceCell;

use crate::config::ServeConfig;

/// This instance's conferences: the SFU, started with the first call, and
/// the rooms.
#[derive(Default)]
pub struct Conferences {
    sfu: OnceCell<sfu::SfuHandle>,
    /// Who is in which conference.
    pub rooms: rooms::Rooms,
}

impl Conferences {
    /// The SFU, bound to its UDP port on first use (so an instance that never
    /// hosts a call binds nothing).
    pub async fn sfu(&self, config: &ServeConfig) -> std::io::Result<&sfu::SfuHandle> {
        self.sfu
            .get_or_try_init(|| async {
                let mut sfu_config = sfu::SfuConfig::new(config.media_addr);
                sfu_config.announce_addr = config.media_public_addr;
                let (handle, _task) = sfu::start(sfu_config).await?;
                tracing::info!(
                    bound = %handle.local_addr(),
                    announced = %handle.announce_addr(),
                    "conference media server started"
                );
                Ok(handle)
            })
            .await
    }
}
