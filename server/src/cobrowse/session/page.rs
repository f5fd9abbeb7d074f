//! The session's page: setting it up in the browser, navigating it (after the
//! SSRF guard's check), its history, and what the browser says about it.

use axum::body::Bytes;
use base64::Engine;
use serde_json::{json, Value};

use super::{Session, Update};
use crate::{
    cobrowse::{
        cdp::{Cdp, CdpEvent},
        protocol, CobrowseSettings,
    },
    webhooks::guard::resolve_allowed,
};

/// The shared page: its DevTools session, and its target (tab) id.
pub(super) struct Page {
    pub(super) session: String,
    pub(super) target: String,
}

/// Opens the session's page in a browser context of its own and starts its
/// screencast.
pub(super) async fn open_page(
    cdp: &Cdp,
    settings: &CobrowseSettings,
    proxy: std::net::SocketAddr,
) -> Result<Page, String> {
    let context = cdp
        .call(
            None,
            "Target.createBrowserContext",
            json!({"disposeOnDetach": true, "proxyServer": format!("http://{proxy}"), "proxyBypassList": "<-loopback>"}),
        )
        .await?;
    let context_id = context["browserContextId"].as_str().unwrap_or_default().to_string();
    // Downloads are refused; the event still comes, so participants hear why.
    cdp.call(
        None,
        "Browser.setDownloadBehavior",
        json!({"behavior": "deny", "browserContextId": context_id, "eventsEnabled": true}),
    )
    .await?;
    let target = cdp
        .call(
            None,
            "Target.createTarget",
            json!({"url": "about:blank", "browserContextId": context_id, "width": settings.width, "height": settings.height}),
        )
        .await?;
    let target_id = target["targetId"].as_str().unwrap_or_default().to_string();
    let attached = cdp
        .call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        )
        .await?;
    let page = attached["sessionId"].as_str().unwrap_or_default().to_string();
    // Pop-ups are opened in the session's own page instead (see `event`).
    cdp.call(None, "Target.setDiscoverTargets", json!({"discover": true}))
        .await?;
    let p = Some(page.as_str());
    cdp.call(p, "Page.enable", json!({})).await?;
    cdp.call(p, "Page.setInterceptFileChooserDialog", json!({"enabled": true}))
        .await?;
    cdp.call(
        p,
        "Emulation.setDeviceMetricsOverride",
        json!({"width": settings.width, "height": settings.height, "deviceScaleFactor": 1, "mobile": false}),
    )
    .await?;
    cdp.call(
        p,
        "Page.startScreencast",
        json!({"format": "jpeg", "quality": settings.jpeg_quality, "maxWidth": settings.width, "maxHeight": settings.height, "everyNthFrame": 1}),
    )
    .await?;
    Ok(Page {
        session: page,
        target: target_id,
    })
}

impl Session {
    /// Opens `raw` after checking it: only http(s), and only hosts the guard
    /// allows (the proxy would refuse them too, but a participant should hear
    /// why instead of seeing the browser's error page).
    pub(super) fn navigate(&mut self, raw: String) {
        let (cdp, page, updates, allowed) = (
            self.cdp.clone(),
            self.page.clone(),
            self.updates.clone(),
            self.settings.allowed.clone(),
        );
        tokio::spawn(async move {
            let url = match url::Url::parse(raw.trim()) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => u,
                _ => {
                    let _ = updates.send(Update::Notice(
                        "invalid_url",
                        "Only http and https addresses can be opened.".into(),
                    ));
                    return;
                }
            };
            let host = url.host_str().unwrap_or_default().trim_matches(['[', ']']).to_string();
            let port = url.port_or_known_default().unwrap_or(443);
            match resolve_allowed(&host, port, &allowed).await {
                Ok(found) if !found.is_empty() => {}
                Ok(_) => {
                    let _ = updates.send(Update::Notice(
                        "navigation_refused",
                        format!("Rapport refused to open {host}: it is on a private or local network."),
                    ));
                    return;
                }
                Err(e) => {
                    let _ = updates.send(Update::Notice("navigation_failed", e));
                    return;
                }
            }
            match cdp
                .call(Some(&page), "Page.navigate", json!({"url": url.as_str()}))
                .await
            {
                // The guard's own refusal is announced by the proxy.
                Ok(result) => {
                    // A refused tunnel is the guard's (announced by the proxy), and
                    // an aborted navigation a download (announced on its own).
                    let announced = |e: &&str| e.contains("TUNNEL") || e.contains("ERR_ABORTED");
                    if let Some(error) = result["errorText"].as_str().filter(|e| !announced(e)) {
                        let _ = updates.send(Update::Notice(
                            "navigation_failed",
                            format!("{} could not be opened ({error}).", url.as_str()),
                        ));
                    }
                }
                Err(e) => {
                    let _ = updates.send(Update::Notice("navigation_failed", e));
                }
            }
        });
    }

    pub(super) fn go_in_history(&self, step: i64) {
        let (cdp, page) = (self.cdp.clone(), self.page.clone());
        tokio::spawn(async move {
            let Ok(history) = cdp.call(Some(&page), "Page.getNavigationHistory", json!({})).await else {
                return;
            };
            let index = history["currentIndex"].as_i64().unwrap_or(0) + step;
            if let Some(entry) = history["entries"].as_array().and_then(|e| e.get(index.max(0) as usize)) {
                if index >= 0 {
                    cdp.send(
                        Some(&page),
                        "Page.navigateToHistoryEntry",
                        json!({"entryId": entry["id"]}),
                    );
                }
            }
        });
    }

    /// Takes a picture of the page as it is now, shown unless a newer frame
    /// came first. The screencast alone can leave a page that has stopped
    /// changing on an older picture: Chromium skips capturing while three of
    /// its frames are being compressed (a burst while a page loads, on a busy
    /// machine), and a still page sends no further frame.
    fn take_screenshot(&self) {
        let (cdp, page, updates) = (self.cdp.clone(), self.page.clone(), self.updates.clone());
        let quality = self.settings.jpeg_quality;
        tokio::spawn(async move {
            // Captured after this moment, so newer than every frame before it.
            let captured_at = super::screen::now_seconds();
            let Ok(shot) = cdp
                .call(
                    Some(&page),
                    "Page.captureScreenshot",
                    json!({"format": "jpeg", "quality": quality}),
                )
                .await
            else {
                return;
            };
            let Some(Ok(jpeg)) = shot["data"]
                .as_str()
                .map(|data| base64::engine::general_purpose::STANDARD.decode(data))
            else {
                return;
            };
            let _ = updates.send(Update::Screenshot {
                captured_at,
                jpeg: Bytes::from(jpeg),
            });
        });
    }

    /// Reads the page's history (address, title, back and forward) again.
    fn refresh_history(&self) {
        let (cdp, page, updates) = (self.cdp.clone(), self.page.clone(), self.updates.clone());
        tokio::spawn(async move {
            let Ok(history) = cdp.call(Some(&page), "Page.getNavigationHistory", json!({})).await else {
                return;
            };
            let index = history["currentIndex"].as_i64().unwrap_or(0);
            let entries = history["entries"].as_array().cloned().unwrap_or_default();
            let Some(current) = entries.get(index.max(0) as usize) else {
                return;
            };
            let _ = updates.send(Update::History {
                url: current["url"].as_str().unwrap_or_default().to_string(),
                title: current["title"].as_str().unwrap_or_default().to_string(),
                back: index > 0,
                forward: (index as usize) + 1 < entries.len(),
            });
        });
    }

    /// Handles a browser event; returns a reason when the browser is gone.
    pub(super) fn event(&mut self, event: CdpEvent) -> Option<String> {
        let ours = event.session_id.as_deref() == Some(self.page.as_str());
        let params = &event.params;
        match event.method.as_str() {
            "Page.screencastFrame" if ours => {
                self.cdp.send(
                    Some(&self.page),
                    "Page.screencastFrameAck",
                    json!({"sessionId": params["sessionId"]}),
                );
                if let Some(data) = params["data"].as_str() {
                    if let Ok(jpeg) = base64::engine::general_purpose::STANDARD.decode(data) {
                        let captured_at = params["metadata"]["timestamp"].as_f64();
                        self.screen.offer(captured_at, Bytes::from(jpeg));
                    }
                }
            }
            "Page.frameNavigated" if ours && params["frame"]["parentId"].is_null() => {
                if let Some(url) = params["frame"]["url"].as_str() {
                    self.state.url = url.to_string();
                }
                self.send_state();
                self.refresh_history();
            }
            "Page.navigatedWithinDocument" if ours => {
                self.refresh_history();
                if params["frameId"].as_str() == Some(self.target.as_str()) {
                    self.take_screenshot();
                }
            }
            "Page.frameStartedLoading" if ours && !self.state.loading => {
                self.state.loading = true;
                self.send_state();
            }
            "Page.loadEventFired" | "Page.frameStoppedLoading" if ours => {
                if self.state.loading {
                    self.state.loading = false;
                    self.send_state();
                }
                self.refresh_history();
                // The main frame's id is its target's (`loadEventFired` is the
                // main frame's alone).
                if params["frameId"].is_null() || params["frameId"].as_str() == Some(self.target.as_str()) {
                    self.take_screenshot();
                }
            }
            "Page.javascriptDialogOpening" if ours => {
                // A dialog would stop the page for everyone: it is answered at
                // once, and its words shown.
                self.cdp.send(
                    Some(&self.page),
                    "Page.handleJavaScriptDialog",
                    json!({"accept": true, "promptText": params["defaultPrompt"].as_str().unwrap_or_default()}),
                );
                let said = params["message"].as_str().unwrap_or_default();
                self.broadcast(&protocol::notice("dialog", &format!("The page said: {said}")));
            }
            "Page.fileChooserOpened" if ours => self.broadcast(&protocol::notice(
                "file_picker_refused",
                "The page asked for a file. Files cannot be chosen in a shared browser.",
            )),
            "Browser.downloadWillBegin" => {
                let name = params["suggestedFilename"].as_str().unwrap_or("a file");
                self.broadcast(&protocol::notice(
                    "download_refused",
                    &format!("Downloads are turned off in co-browsing: {name} was not downloaded."),
                ));
            }
            "Target.targetCreated" | "Target.targetInfoChanged" => self.target_changed(&params["targetInfo"]),
            "Target.detachedFromTarget" if params["sessionId"].as_str() == Some(self.page.as_str()) => {
                return Some("browser_crashed".into());
            }
            "Inspector.targetCrashed" if ours => return Some("browser_crashed".into()),
            _ => {}
        }
        None
    }

    /// A tab changed or appeared. The shared page's new title is shown; a
    /// page another one opened (a pop-up) is closed and its address opened in
    /// the shared page, which is the only one participants see.
    fn target_changed(&mut self, target: &Value) {
        if target["targetId"].as_str() == Some(self.target.as_str()) {
            let title = target["title"].as_str().unwrap_or_default();
            if title != self.state.title && !title.is_empty() {
                self.state.title = title.to_string();
                self.send_state();
            }
            return;
        }
        let is_popup = target["type"] == "page" && target["openerId"].is_string() && target["attached"] == false;
        let url = target["url"].as_str().unwrap_or_default();
        if !is_popup || url.is_empty() || url == "about:blank" {
            return;
        }
        if let Some(id) = target["targetId"].as_str() {
            self.cdp.send(None, "Target.closeTarget", json!({"targetId": id}));
        }
        self.broadcast(&protocol::notice(
            "popup_opened",
            "The page opened a new window; it is shown here instead.",
        ));
        self.navigate(url.to_string());
    }
}
