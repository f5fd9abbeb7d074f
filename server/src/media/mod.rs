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
//! - [`recorder`] and [`webm`]: recordings of calls whose appointment has
//!   `record` on, one WebM file per participant and camera or screen.
//!
//! A conference lives on one instance: the one whose SFU its participants'
//! media reaches. Behind a load balancer, route `/join/{token}` (the page and
//! its WebSocket) by the token, so that every participant of one appointment
//! reaches the same instance (see the README). The recording switch may be
//! set on any instance: it is announced to all (`LiveEvent::AppointmentRecording`),
//! and the one holding the call acts on it.

pub mod recorder;
pub mod rooms;
pub mod sfu;
pub mod signal;
pub mod webm;

use std::{net::SocketAddr, path::PathBuf, sync::Arc};

use rapport_core::{
    ids::{AppointmentId, TenantId},
    live::{LiveEvent, Room},
    Services,
};
use tokio::sync::OnceCell;

/// Where this instance's conferences run.
#[derive(Debug, Clone)]
pub struct MediaSettings {
    /// The SFU's UDP socket.
    pub bind: SocketAddr,
    /// The address announced in ICE candidates.
    pub announce: Option<SocketAddr>,
    /// Where recordings are written while the call goes on.
    pub recordings_dir: PathBuf,
}

/// This instance's conferences: the SFU and the recorder, started with the
/// first call, and the rooms.
pub struct Conferences {
    settings: MediaSettings,
    services: Services,
    started: OnceCell<(sfu::SfuHandle, Arc<recorder::Recorder>)>,
    /// Who is in which conference.
    pub rooms: Arc<rooms::Rooms>,
}

impl Conferences {
    /// Conferences on `settings`, storing through `services`. Nothing runs
    /// before the first call.
    pub fn new(settings: MediaSettings, services: Services) -> Self {
        Conferences {
            settings,
            services,
            started: OnceCell::new(),
            rooms: Arc::default(),
        }
    }

    /// The SFU and the recorder, started on first use (so an instance that
    /// never hosts a call binds nothing), with the task that hears the
    /// recording switch.
    async fn started(&self) -> std::io::Result<&(sfu::SfuHandle, Arc<recorder::Recorder>)> {
        self.started
            .get_or_try_init(|| async {
                let recorder = Arc::new(recorder::Recorder::start(
                    self.services.clone(),
                    self.rooms.clone(),
                    self.settings.recordings_dir.clone(),
                ));
                let mut sfu_config = sfu::SfuConfig::new(self.settings.bind);
                sfu_config.announce_addr = self.settings.announce;
                sfu_config.media_tap = Some(recorder.tap());
                let (handle, _task) = sfu::start(sfu_config).await?;
                tracing::info!(
                    bound = %handle.local_addr(),
                    announced = %handle.announce_addr(),
                    "conference media server started"
                );
                tokio::spawn(hear_recording_switch(
                    self.services.clone(),
                    self.rooms.clone(),
                    recorder.clone(),
                    handle.clone(),
                ));
                Ok((handle, recorder))
            })
            .await
    }

    /// The SFU.
    pub async fn sfu(&self) -> std::io::Result<&sfu::SfuHandle> {
        Ok(&self.started().await?.0)
    }

    /// Starts or stops recording `room` to match its switch.
    pub async fn sync_recording(&self, room: &str, tenant_id: &TenantId) {
        if let Ok((sfu, recorder)) = self.started().await {
            sync(&self.rooms, recorder, sfu, room, tenant_id);
        }
    }

    /// Finishes and stores the recordings of the calls going on: for a
    /// shutdown (the calls themselves end with the process).
    pub async fn shutdown(&self) {
        if let Some((_, recorder)) = self.started.get() {
            recorder.finish_all().await;
        }
    }

    /// A participant left the call: their recordings are finished, and the
    /// room's, when it was the last one.
    pub async fn left(&self, room: &str, participant: &str, room_ended: bool) {
        if let Some((_, recorder)) = self.started.get() {
            recorder.left(room, participant);
            if room_ended {
                recorder.stop(room);
            }
        }
    }
}

fn sync(rooms: &rooms::Rooms, recorder: &recorder::Recorder, sfu: &sfu::SfuHandle, room: &str, tenant_id: &TenantId) {
    match (rooms.is_recording(room), recorder.is_recording(room)) {
        (true, false) => {
            recorder.record(room, tenant_id);
            sfu.request_keyframes(room);
        }
        (false, true) => recorder.stop(room),
        _ => {}
    }
}

/// Hears the appointments' recording switch, from this instance and (on
/// PostgreSQL) every other, and applies it to the calls held here. After
/// missed announcements, each open room's appointment is read again.
async fn hear_recording_switch(
    services: Services,
    rooms: Arc<rooms::Rooms>,
    recorder: Arc<recorder::Recorder>,
    sfu: sfu::SfuHandle,
) {
    let mut updates = services.live().subscribe(Room::Calls);
    loop {
        let update = updates.recv().await;
        let switched: Vec<(String, TenantId, bool)> = match &update.event {
            LiveEvent::AppointmentRecording { appointment_id, record } => {
                vec![(appointment_id.to_string(), update.tenant_id.clone(), *record)]
            }
            // Fell behind, or missed another instance's: read every room's.
            LiveEvent::Resync => read_switches(&services, &rooms).await,
            _ => continue,
        };
        for (room, tenant_id, record) in switched {
            rooms.set_recording(&room, &tenant_id, record);
            sync(&rooms, &recorder, &sfu, &room, &tenant_id);
        }
    }
}

/// The recording switch of every room open here, read from storage.
async fn read_switches(services: &Services, rooms: &rooms::Rooms) -> Vec<(String, TenantId, bool)> {
    let mut switches = Vec::new();
    for (room, tenant_id) in rooms.open() {
        if let Ok(appointment) = services
            .get_appointment(&tenant_id, &AppointmentId::from(room.as_str()))
            .await
        {
            switches.push((room, tenant_id, appointment.record));
        }
    }
    switches
}
