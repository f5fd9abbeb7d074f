//! Universal co-browsing (issue 25): the people holding a co-browsing link's
//! two links browse together in one real Chromium running on the server.
//!
//! - [`chromium`] finds and starts the browser, one process and throw-away
//!   profile per session;
//! - [`cdp`] is the thin DevTools client that drives it;
//! - [`proxy`] is the SSRF guard every request of the browser goes through;
//! - [`session`] is the task that owns one session: screencast, input of
//!   whoever holds control, pointers, control hand-overs, its end;
//! - [`socket`] serves `/cobrowse/{id}/ws` to participants, and relays those
//!   who reach another instance to the one that runs the session's browser.
//!
//! This type is the instance's registry of running sessions: it bounds how many
//! run at once, and reports whether co-browsing is available at all.

pub mod cdp;
pub mod chromium;
pub mod protocol;
pub mod proxy;
pub mod session;
pub mod socket;

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use rapport_core::{cobrowsing::CobrowseClaim, error::CoreError, links::CobrowseSession, Services};

use crate::webhooks::guard::AllowedNetworks;

pub use session::SessionHandle;

/// How co-browsing runs on this instance.
#[derive(Debug, Clone)]
pub struct CobrowseSettings {
    /// The Chromium binary, when configured (`RAPPORT_CHROMIUM`); else looked up on `PATH`.
    pub chromium: Option<PathBuf>,
    /// Non-public networks the browser may reach anyway.
    pub allowed: AllowedNetworks,
    /// A session ends after this long without anyone using it.
    pub idle: Duration,
    /// Sessions this instance runs at once.
    pub max_sessions: usize,
    /// The user ids browsers run as (one each) when Rapport runs as root.
    pub uids: chromium::UidRange,
    /// Whether browsers run in Chromium's sandbox.
    pub sandbox: bool,
    /// Where other instances reach this one, to relay participants to it.
    pub instance_url: String,
    /// The shared viewport, CSS px.
    pub width: u32,
    /// The shared viewport, CSS px.
    pub height: u32,
    /// Screencast JPEG quality, 1–100.
    pub jpeg_quality: u8,
}

/// Why a participant cannot join here.
#[derive(Debug)]
pub enum JoinRefusal {
    /// Chromium is missing: the reason.
    Unavailable(String),
    /// As many sessions run as the instance may run.
    Busy(usize),
    /// The session's tenant runs as many sessions as it may (`cobrowseSessions`).
    TenantBusy(i64),
    /// The session ended; its links no longer open it.
    Ended,
    /// Another instance runs it, at this internal URL.
    Elsewhere(String),
    /// The browser could not be started.
    Failed(String),
}

/// The instance's co-browsing sessions.
pub struct Cobrowsing {
    settings: Arc<CobrowseSettings>,
    /// The browser and who runs it, or why co-browsing is unavailable.
    chromium: Result<chromium::Launcher, String>,
    services: Services,
    sessions: Arc<Mutex<HashMap<String, SessionHandle>>>,
    /// Held while a session's browser starts, so two participants arriving
    /// together start one browser, and the bound holds.
    starting: tokio::sync::Mutex<()>,
}

impl Cobrowsing {
    /// The registry, with Chromium looked up now.
    pub fn new(settings: CobrowseSettings, services: Services) -> Cobrowsing {
        let chromium = chromium::locate(settings.chromium.as_deref())
            .map(|binary| chromium::Launcher::new(binary, settings.uids, settings.sandbox));
        Cobrowsing {
            settings: Arc::new(settings),
            chromium,
            services,
            sessions: Arc::default(),
            starting: tokio::sync::Mutex::new(()),
        }
    }

    /// Why co-browsing is not available here, if it is not.
    pub fn unavailable(&self) -> Option<&str> {
        self.chromium.as_ref().err().map(String::as_str)
    }

    /// The settings.
    pub fn settings(&self) -> &CobrowseSettings {
        &self.settings
    }

    /// Sessions running now.
    pub fn running(&self) -> usize {
        self.sessions.lock().expect("registry lock").len()
    }

    /// Says at start whether co-browsing works, with Chromium's version.
    pub async fn report(&self) {
        match &self.chromium {
            Ok(launcher) => match chromium::version(&launcher.binary).await {
                Ok(version) => tracing::info!(
                    chromium = %launcher.binary.display(), %version, max_sessions = self.settings.max_sessions,
                    user = %launcher.describe_user(), sandbox = self.settings.sandbox,
                    "co-browsing available"
                ),
                Err(e) => tracing::warn!(error = %e, "co-browsing may not work: Chromium does not answer"),
            },
            Err(reason) => tracing::warn!(%reason, "co-browsing unavailable"),
        }
    }

    /// The running session a participant of `info` joins: this instance's, a
    /// new one (its browser started now), or word of which instance runs it.
    pub async fn session(&self, info: &CobrowseSession) -> Result<SessionHandle, JoinRefusal> {
        if let Some(handle) = self.find(&info.session_id) {
            return Ok(handle);
        }
        let chromium = self.chromium.clone().map_err(JoinRefusal::Unavailable)?;
        let _starting = self.starting.lock().await;
        if let Some(handle) = self.find(&info.session_id) {
            return Ok(handle);
        }
        if self.running() >= self.settings.max_sessions {
            return Err(JoinRefusal::Busy(self.settings.max_sessions));
        }
        let limits = self
            .services
            .tenant_limits(&info.tenant_id)
            .await
            .map_err(|e| JoinRefusal::Failed(e.to_string()))?;
        let url = &self.settings.instance_url;
        match self
            .services
            .claim_cobrowse(&info.session_id, url, limits.cobrowse_sessions)
            .await
        {
            Ok(CobrowseClaim::Mine) => {}
            Ok(CobrowseClaim::Elsewhere(owner)) => return Err(JoinRefusal::Elsewhere(owner)),
            Ok(CobrowseClaim::TenantBusy) => return Err(JoinRefusal::TenantBusy(limits.cobrowse_sessions)),
            Err(CoreError::Conflict { .. }) => return Err(JoinRefusal::Ended),
            Err(e) => return Err(JoinRefusal::Failed(e.to_string())),
        }
        let started = session::start(
            info.clone(),
            self.settings.clone(),
            &chromium,
            self.services.clone(),
            self.sessions.clone(),
            usize::try_from(limits.cobrowse_participants).unwrap_or(usize::MAX),
        )
        .await;
        match started {
            Ok(handle) => {
                self.sessions
                    .lock()
                    .expect("registry lock")
                    .insert(info.session_id.clone(), handle.clone());
                tracing::info!(session = %info.session_id, "co-browsing session started");
                Ok(handle)
            }
            Err(e) => {
                tracing::error!(error = %e, "starting a co-browsing browser failed");
                if let Err(e) = self.services.release_cobrowse(&info.session_id, url).await {
                    tracing::warn!(error = %e, "releasing a co-browsing claim failed");
                }
                Err(JoinRefusal::Failed(e.to_string()))
            }
        }
    }

    /// The session of `id` on this instance, running or just ended.
    fn find(&self, id: &str) -> Option<SessionHandle> {
        self.sessions.lock().expect("registry lock").get(id).cloned()
    }

    /// Ends every session (the server stops): participants are told, browsers
    /// closed and the sessions recorded.
    pub async fn shutdown(&self) {
        let handles: Vec<SessionHandle> = self.sessions.lock().expect("registry lock").values().cloned().collect();
        for handle in handles {
            handle.shut_down().await;
        }
    }
}
