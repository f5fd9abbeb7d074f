//! Measuring: `cargo xtask bench` (the Rust benchmarks, and the browser ones
//! against a running server) and `cargo xtask budget` (the dashboard's first
//! load).

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{
    tasks::{build, demo_data, ensure_chromium, start_server, tempdir, CHROMIUM, E2E_ADMIN_EMAIL, E2E_ADMIN_PASSWORD},
    tools::{cargo, ensure_npm_packages, root, run as run_cmd, target_dir},
};

/// `cargo xtask bench [webhooks|writes|routing|recording|timers|reports|search|conference|cobrowse|abuse|soak]`:
/// the benchmarks, in release mode, each with ratios to a baseline measured in
/// the same run: webhook delivery throughput and latency, the write path of the
/// `rapport` process over HTTP (creates, their latency, reads beside them, memory
/// in a soak), routing decisions and message-to-assignment latency, recording
/// ingest against direct writes, the job runner's timer lateness behind 100,000
/// pending timers, report latency over 10 million facts, video calls (join
/// to first frame, SFU CPU per forwarded stream, most participants flowing), and
/// universal co-browsing (input to frame, frames per participant, CPU and memory
/// per session, sessions held at 10 fps), and one tenant's public endpoints
/// abused (idle streams, a flood) against a neighbour's creates and chat, and
/// a soak of two instances on one PostgreSQL under a mixed load (p99 per
/// operation, errors, each instance's memory over time).
pub fn bench(args: &[String]) -> Result<()> {
    // The package of each one's `cargo bench`; `conference` has only its
    // browser part.
    let all = [
        (Some("rapport-server"), "webhooks"),
        (Some("rapport-server"), "writes"),
        (Some("rapport-server"), "routing"),
        (Some("rapport-server"), "recording"),
        (Some("rapport-server"), "timers"),
        (Some("rapport-core"), "reports"),
        (Some("rapport-core"), "search"),
        (None, "conference"),
        (None, "cobrowse"),
        (Some("rapport-server"), "abuse"),
        (Some("rapport-server"), "soak"),
    ];
    let chosen: Vec<_> = all
        .iter()
        .filter(|(_, name)| args.is_empty() || args.iter().any(|a| a == name))
        .collect();
    if chosen.is_empty() {
        bail!("unknown benchmark; choose from webhooks, writes, routing, recording, timers, reports, search, conference, cobrowse, abuse, soak");
    }
    for (package, name) in chosen {
        if let Some(package) = package {
            run_cmd(cargo().args(["bench", "--package", package, "--bench", name]))?;
        }
        match *name {
            // Storage per minute on the demo shop, live-view lag.
            "recording" => browser_bench("recording", "recording-bench.mjs")?,
            // Join to first frame, SFU CPU per stream, most participants.
            "conference" => browser_bench("conference", "conference-bench.mjs")?,
            // Input to frame, frames and bytes per participant, CPU and memory
            // per session, sessions held at 10 fps.
            "cobrowse" => browser_bench("cobrowse", "cobrowse-bench.mjs")?,
            _ => {}
        }
    }
    Ok(())
}

/// A benchmark's figures that need a browser: `end2end/<script>` run by node
/// against a release server with its demo shop on a fresh database. Sets
/// BASE_URL, DEMO_URL, ADMIN_EMAIL, ADMIN_PASSWORD, API_TOKEN_FILE (a tenant
/// API key, in a file), CHROMIUM_PATH and RAPPORT_PID (the server's process
/// id, for its CPU time); the server logs to `target/bench-<name>-server.log`.
fn browser_bench(name: &str, script: &str) -> Result<()> {
    build(&["--release".to_string()])?;
    ensure_chromium()?;
    let e2e = root().join("end2end");
    ensure_npm_packages(&e2e)?;
    let data = tempdir()?;
    let log_path = target_dir().join(format!("bench-{name}-server.log"));
    let (server, base_url, demo_url) = start_server("release", &data, &log_path)?;
    let key_name = format!("{name} bench");
    let key = Command::new(target_dir().join("release").join("rapport"))
        .args([
            "admin",
            "create-api-key",
            "--tenant",
            "default",
            "--name",
            key_name.as_str(),
        ])
        .env("RAPPORT_DATA_DIR", &data)
        .env_remove("DATABASE_URL")
        .output()
        .context("cannot create an API key for the bench")?;
    if !key.status.success() {
        bail!("creating an API key failed: {}", String::from_utf8_lossy(&key.stderr));
    }
    // The key goes through a file: the command line is echoed, and tokens are
    // never printed.
    let token_file = data.join("api-token");
    std::fs::write(&token_file, String::from_utf8_lossy(&key.stdout).trim())?;
    // The benchmarks run many co-browsing sessions, and many people in a call
    // or session, in one workspace: more than a tenant's defaults allow.
    run_cmd(
        Command::new(target_dir().join("release").join("rapport"))
            .args([
                "admin",
                "set-limits",
                "--tenant",
                "default",
                "--limits",
                r#"{"cobrowseSessions": 64, "cobrowseParticipants": 100}"#,
            ])
            .env("RAPPORT_DATA_DIR", &data)
            .env_remove("DATABASE_URL"),
    )?;
    let measured = run_cmd(
        Command::new("node")
            .arg(script)
            .current_dir(&e2e)
            .env("BASE_URL", &base_url)
            .env("DEMO_URL", &demo_url)
            .env("ADMIN_EMAIL", E2E_ADMIN_EMAIL)
            .env("ADMIN_PASSWORD", E2E_ADMIN_PASSWORD)
            .env("API_TOKEN_FILE", &token_file)
            .env("CHROMIUM_PATH", CHROMIUM)
            .env("RAPPORT_PID", server.0.id().to_string()),
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
    measured
}

/// `cargo xtask budget`: the dashboard's performance budget (first-load bytes
/// and time to first byte), measured by `end2end/budget.mjs` against a release
/// build serving a month of demo data.
pub fn budget(_args: &[String]) -> Result<()> {
    build(&["--release".to_string()])?;
    let e2e = root().join("end2end");
    ensure_npm_packages(&e2e)?;
    let data = tempdir()?;
    let log_path = target_dir().join("budget-server.log");
    let (server, base_url, _) = start_server("release", &data, &log_path)?;
    demo_data("release", &data, &["--days", "30", "--agents", "10"])?;
    let measured = run_cmd(
        Command::new("node")
            .arg("budget.mjs")
            .current_dir(&e2e)
            .env("BASE_URL", &base_url)
            .env("ADMIN_EMAIL", E2E_ADMIN_EMAIL)
            .env("ADMIN_PASSWORD", E2E_ADMIN_PASSWORD),
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
    measured
}
