//! Co-browsing within its bounds: a tenant runs at most `cobrowseSessions`
//! browsers at once, a session holds at most `cobrowseParticipants` people, and
//! the browser runs sandboxed and never as root. With a real Chromium, on both
//! backends.

use std::time::Duration;

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::{
    cobrowsing::{connect, first_of, next_of, red_site, say},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

/// The real user id and command line of every co-browsing browser process
/// running now (their profile directories are named `rapport-cobrowse-…`).
fn browser_processes() -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !cmdline.contains("--user-data-dir=") || !cmdline.contains("rapport-cobrowse-") {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let uid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next()?.parse().ok())
            .unwrap();
        found.push((uid, cmdline));
    }
    found
}

/// The process ids of the co-browsing browsers running now.
fn browser_pids() -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("rapport-cobrowse-"))
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// A tenant runs at most `cobrowseSessions` browsers at once and a session
/// holds at most `cobrowseParticipants` people, so one agent's links cannot
/// hold every browser of the instance, nor a link handed round make the server
/// stream to a crowd. The host always gets in; a neighbour is never held up.
async fn cobrowsing_is_bounded_per_tenant_and_per_session(db: TestDb) {
    let app = TestApp::start_with(db, |c| {
        c.webhooks.allow_private_networks = "127.0.0.0/8".parse().unwrap();
    })
    .await;
    let (tenant, t) = app.tenant_with_key("Bounded").await;
    let (_, neighbour) = app.tenant_with_key("Neighbour").await;
    let platform = app.platform_key().await;
    let limits = format!("/rest/v1/tenant/{tenant}/limits");
    let too_few = send(
        &app,
        Method::PUT,
        &limits,
        &platform,
        Some(json!({"cobrowseParticipants": 1})),
    )
    .await;
    let problem = expect_problem(too_few, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["cobrowseParticipants"], "{problem}");
    let set = send(
        &app,
        Method::PUT,
        &limits,
        &platform,
        Some(json!({"cobrowseSessions": 1, "cobrowseParticipants": 2})),
    )
    .await;
    let set = ok_json(set, StatusCode::OK).await;
    assert_eq!(
        (set["cobrowseSessions"].as_i64(), set["cobrowseParticipants"].as_i64()),
        (Some(1), Some(2))
    );
    let site = red_site().await;
    let link = |token: &str| {
        let token = token.to_string();
        let site = site.clone();
        let app = &app;
        async move {
            ok_json(
                app.post("/rest/v1/cobrowsing/link", &token, json!({"url": site})).await,
                StatusCode::CREATED,
            )
            .await
        }
    };
    let first = link(&t).await;
    let mut host = connect(&app, first["hostLink"].as_str().unwrap()).await;
    assert_eq!(next_of(&mut host, "welcome").await["role"], "host");
    // The browser runs sandboxed, and never as root: run as root (as CI
    // does), Rapport gives it a user id of its own.
    let browsers = browser_processes();
    assert!(!browsers.is_empty(), "the session's browser runs");
    for (uid, cmdline) in &browsers {
        assert_ne!(*uid, 0, "a browser runs as root: {cmdline}");
        assert!(!cmdline.contains("--no-sandbox"), "{cmdline}");
    }
    // Nor does it get the server's environment (its keys, the database's URL).
    for pid in browser_pids() {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let environ = String::from_utf8_lossy(&environ);
        assert!(
            !environ.contains("CARGO_") && !environ.contains("RAPPORT_"),
            "{environ}"
        );
    }
    let mut guest = connect(&app, first["joinLink"].as_str().unwrap()).await;
    assert_eq!(next_of(&mut guest, "welcome").await["role"], "guest");
    // Two people: a third is refused, but the host's second tab gets in.
    let mut third = connect(&app, first["joinLink"].as_str().unwrap()).await;
    let full = next_of(&mut third, "error").await;
    assert_eq!(full["code"], "session_full", "{full}");
    let mut host_again = connect(&app, first["hostLink"].as_str().unwrap()).await;
    assert_eq!(next_of(&mut host_again, "welcome").await["role"], "host");

    // A second session of the same workspace does not start while one runs;
    // the neighbour's does.
    let second = link(&t).await;
    let mut refused = connect(&app, second["joinLink"].as_str().unwrap()).await;
    let busy = next_of(&mut refused, "error").await;
    assert_eq!(busy["code"], "tenant_busy", "{busy}");
    let theirs = link(&neighbour).await;
    let mut other = connect(&app, theirs["hostLink"].as_str().unwrap()).await;
    assert_eq!(next_of(&mut other, "welcome").await["role"], "host");
    // Each browser runs as a user id of its own, so one that a page broke out
    // of reaches neither the other's processes nor its profile. (Other tests'
    // browsers may run too: each profile directory's processes share one id,
    // and no two profiles share an id.)
    let mut uid_of_profile: std::collections::HashMap<String, u32> = Default::default();
    for (uid, cmdline) in browser_processes() {
        let profile = cmdline
            .split_whitespace()
            .find_map(|a| a.strip_prefix("--user-data-dir="))
            .unwrap()
            .to_string();
        let known = *uid_of_profile.entry(profile.clone()).or_insert(uid);
        assert_eq!(known, uid, "one browser, one user: {profile}");
    }
    assert!(uid_of_profile.len() >= 2, "{uid_of_profile:?}");
    let as_root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    let mut uids: Vec<u32> = uid_of_profile.values().copied().collect();
    uids.sort_unstable();
    uids.dedup();
    if as_root {
        assert_eq!(
            uids.len(),
            uid_of_profile.len(),
            "browsers share a user: {uid_of_profile:?}"
        );
    }

    // Once the first ends, the second starts.
    say(&mut host, json!({"type": "end"})).await;
    assert_eq!(next_of(&mut host, "ended").await["reason"], "ended_by_host");
    let mut started = None;
    for _ in 0..50 {
        let mut socket = connect(&app, second["hostLink"].as_str().unwrap()).await;
        if first_of(&mut socket, &["welcome", "error"]).await["type"] == "welcome" {
            started = Some(socket);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut started = started.expect("the workspace's next session starts once its first has ended");
    say(&mut started, json!({"type": "end"})).await;
    say(&mut other, json!({"type": "end"})).await;
    next_of(&mut started, "ended").await;
    next_of(&mut other, "ended").await;
    app.stop().await;
}

backend_tests!(cobrowsing_is_bounded_per_tenant_and_per_session);
