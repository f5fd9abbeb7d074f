//! The `run`, `build` and `test` commands.

use std::{
    io::{BufRead, BufReader},
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};

use crate::{
    site::{build_site, SiteProfile},
    tools::{cargo, ensure_npm_packages, has_program, root, run as run_cmd, site_dir, target_dir},
};

/// `cargo xtask build [--release]`: the site and the server binary.
pub fn build(args: &[String]) -> Result<()> {
    let release = args.iter().any(|a| a == "--release");
    let site = if release {
        SiteProfile::Release
    } else {
        SiteProfile::Dev
    };
    build_site(site)?;
    let mut cmd = cargo();
    cmd.args(["build", "--package", "rapport-server", "--bin", "rapport"]);
    if release {
        cmd.arg("--release");
    }
    run_cmd(&mut cmd)
}

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

/// `cargo xtask run [-- <rapport serve flags>]`: builds what a first start
/// needs and serves on the embedded SQLite database in `./data` (or
/// `RAPPORT_DATA_DIR`).
///
/// A first start on a fresh machine must be ready in minutes, so it builds
/// what costs least to build and still serves well: the server with cargo
/// profile `first-start` (optimised, without link-time optimisation, which took about
/// 20 minutes of a 35-minute first start on 2 cores for a few percent of
/// speed), and the site as [`SiteProfile::Run`]. `cargo xtask build --release`
/// builds what is shipped.
pub fn run(args: &[String]) -> Result<()> {
    let started = Instant::now();
    build_site(SiteProfile::Run)?;
    let compile = Instant::now();
    run_cmd(cargo().args([
        "build",
        "--package",
        "rapport-server",
        "--bin",
        "rapport",
        "--profile",
        "first-start",
    ]))?;
    eprintln!(
        "xtask: the server compiled in {:.1} s; ready to start {:.1} s after `cargo xtask run` began",
        compile.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    // Co-browsing runs a Chromium per session. Without it Rapport still runs,
    // and its co-browsing links say why they cannot open.
    if let Err(e) = ensure_chromium() {
        eprintln!("xtask: co-browsing will be unavailable: {e:#}");
    }
    let binary = target_dir().join("first-start").join("rapport");
    let mut cmd = Command::new(binary);
    cmd.arg("serve")
        .args(args.iter().filter(|a| *a != "--"))
        .current_dir(root());
    if std::env::var_os("RAPPORT_SITE_DIR").is_none() {
        cmd.env("RAPPORT_SITE_DIR", site_dir());
    }
    // The demo shop, on its own origin, so a newcomer can chat as a visitor.
    if std::env::var_os("RAPPORT_DEMO_ADDR").is_none() {
        cmd.env("RAPPORT_DEMO_ADDR", "127.0.0.1:3001");
    }
    eprintln!("xtask: starting Rapport");
    let status = cmd.status().context("cannot start rapport")?;
    if !status.success() {
        bail!("rapport exited with {status}");
    }
    Ok(())
}

/// Totals over every runner, and the names of the tests that failed: CI shows
/// only the end of a run's output, so the end must say what broke.
#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    failures: Vec<String>,
}

/// The host crates every test command builds, with one feature selection, so
/// that each cargo command of a test run reuses the others' artifacts: cargo
/// unifies features over the packages it is given, and another selection (say,
/// the server alone, without the dev-dependencies' features) would compile
/// `rapport-core` and everything above it again.
const TEST_SELECTION: [&str; 5] = [
    "--workspace",
    // The browser crate is built for its real target by the site.
    "--exclude",
    "rapport-frontend",
    // The app's server side (and its tests), as the server builds it.
    "--features",
    "rapport-app/ssr",
];

/// `cargo xtask test`: formatting, lints, unit and HTTP tests (SQLite, and
/// PostgreSQL when `RAPPORT_TEST_POSTGRES_URL` is set), then Playwright in Chromium.
///
/// Each crate is compiled once per target: clippy lints the workspace's crates
/// inside the builds the tests use (see [`crate::tools::lint_while_compiling`]),
/// the browser tests run the server binary the HTTP tests were built with, and
/// their site is neither size-optimised nor precompressed. Each step's time is
/// printed at the end (the README's testing section keeps a table of them).
pub fn test(args: &[String]) -> Result<()> {
    let skip_e2e = args.iter().any(|a| a == "--no-e2e");
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut steps = Steps::default();

    steps.time("format", || run_cmd(cargo().args(["fmt", "--all", "--", "--check"])))?;
    steps.time("type-check and lint the visitor script", crate::visitor::check_visitor)?;

    // Every host target, tests and benchmarks included, compiled once and linted
    // by clippy as `cargo clippy --all-targets -- -D warnings` would.
    steps.time("build and lint the host crates", || {
        let mut build = cargo();
        build.args(["test", "--no-run", "--all-targets"]).args(TEST_SELECTION);
        crate::tools::lint_while_compiling(&mut build);
        run_cmd(&mut build)
    })?;

    if std::env::var_os("RAPPORT_TEST_POSTGRES_URL").is_none() {
        eprintln!("xtask: note: RAPPORT_TEST_POSTGRES_URL is unset; PostgreSQL variants of the tests will be skipped");
    }
    // The co-browsing tests drive a real Chromium from the server's tests too.
    ensure_chromium()?;
    // The media-store tests write to a real S3 server too; it stops when dropped.
    let garage = steps.time("install and start the S3 server", crate::s3::Garage::start)?;
    let cargo_ok = steps.time("unit and HTTP tests", || {
        run_unit_and_http_tests(&mut tally, &garage.env)
    })?;
    drop(garage);

    let e2e_ok = if skip_e2e {
        true
    } else {
        // The browser crates are linted for their real target while the site
        // compiles; the server is the debug binary the HTTP tests were built with.
        steps.time("build and lint the site", || build_site(SiteProfile::Test).map(|_| ()))?;
        steps.time("browser tests", || end_to_end(&mut tally))?
    };

    println!("xtask: finished in {:.0} s", started.elapsed().as_secs_f64());
    steps.print();
    println!("{} passed, {} failed", tally.passed, tally.failed);
    for name in &tally.failures {
        println!("failed: {name}");
    }
    if !cargo_ok || !e2e_ok || tally.failed > 0 {
        bail!("some tests failed");
    }
    if tally.passed == 0 {
        bail!("no test ran");
    }
    Ok(())
}

/// The unit and HTTP tests, with cargo-nextest: one process per test, so the
/// server's tests (each starts Rapport with Leptos on a Tokio runtime of its
/// own) never share a process, and several run at once; `.config/nextest.toml`
/// serialises those that must not overlap. Without nextest, `cargo test` runs
/// them one at a time: side by side in one process, a page request of one test
/// now and then never completed while another test's runtime shut down.
fn run_unit_and_http_tests(tally: &mut Tally, env: &[(String, String)]) -> Result<bool> {
    let mut cmd = cargo();
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    if has_nextest() {
        cmd.args(["nextest", "run", "--no-fail-fast"]).args(TEST_SELECTION);
        crate::tools::lint_while_compiling(&mut cmd);
        // nextest reports on stderr.
        run_counting(&mut cmd, Output::Stderr, tally, parse_nextest_line)
    } else {
        eprintln!("xtask: note: cargo-nextest is missing; the tests run one at a time with cargo test");
        cmd.args(["test", "--no-fail-fast"])
            .args(TEST_SELECTION)
            .args(["--", "--test-threads=1"]);
        crate::tools::lint_while_compiling(&mut cmd);
        run_counting(&mut cmd, Output::Stdout, tally, parse_cargo_line)
    }
}

fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// How long each step of a test run took, printed at its end.
#[derive(Default)]
struct Steps(Vec<(&'static str, Duration)>);

impl Steps {
    fn time<T>(&mut self, name: &'static str, step: impl FnOnce() -> Result<T>) -> Result<T> {
        let started = Instant::now();
        let result = step();
        self.0.push((name, started.elapsed()));
        result
    }

    fn print(&self) {
        for (name, took) in &self.0 {
            println!("xtask: {:>6.0} s  {name}", took.as_secs_f64());
        }
    }
}

/// Which of a test runner's streams carries its results.
#[derive(Clone, Copy)]
enum Output {
    Stdout,
    Stderr,
}

/// Runs a command, echoing its output and counting results with `parse` from the
/// stream `results`.
fn run_counting(cmd: &mut Command, results: Output, tally: &mut Tally, parse: fn(&str, &mut Tally)) -> Result<bool> {
    eprintln!("xtask: {}", crate::tools::shown(cmd));
    cmd.current_dir(cmd.get_current_dir().map(Path::to_path_buf).unwrap_or_else(root));
    match results {
        Output::Stdout => cmd.stdout(Stdio::piped()),
        Output::Stderr => cmd.stderr(Stdio::piped()),
    };
    let mut child = cmd.spawn().context("cannot start test runner")?;
    let stream: Box<dyn std::io::Read> = match results {
        Output::Stdout => Box::new(child.stdout.take().expect("piped stdout")),
        Output::Stderr => Box::new(child.stderr.take().expect("piped stderr")),
    };
    for line in BufReader::new(stream).lines() {
        let line = line?;
        match results {
            Output::Stdout => println!("{line}"),
            Output::Stderr => eprintln!("{line}"),
        }
        parse(&line, tally);
    }
    Ok(child.wait()?.success())
}

/// `test result: ok. 12 passed; 0 failed; ...`, and `test name ... FAILED`.
fn parse_cargo_line(line: &str, tally: &mut Tally) {
    if let Some(name) = line.strip_prefix("test ").and_then(|l| l.strip_suffix(" ... FAILED")) {
        tally.failures.push(name.to_string());
        return;
    }
    let Some(rest) = line.strip_prefix("test result: ") else {
        return;
    };
    for part in rest.split(';') {
        let words: Vec<&str> = part.split_whitespace().collect();
        if let Some(pos) = words.iter().position(|w| *w == "passed") {
            tally.passed += words.get(pos.wrapping_sub(1)).and_then(|n| n.parse().ok()).unwrap_or(0);
        }
        if let Some(pos) = words.iter().position(|w| *w == "failed") {
            tally.failed += words.get(pos.wrapping_sub(1)).and_then(|n| n.parse().ok()).unwrap_or(0);
        }
    }
}

/// nextest's summary, `Summary [ 368.1s] 500 tests run: 498 passed (3 slow), 2
/// failed, 4 skipped`, and a failed test's line, `FAIL [ 1.2s] rapport-server::it
/// cobrowsing::idle` (each attempt's, and again in the final list).
fn parse_nextest_line(line: &str, tally: &mut Tally) {
    let line = line.trim_start();
    if let Some(rest) = line.strip_prefix("FAIL [") {
        if let Some((_, name)) = rest.split_once(']') {
            let name = name.trim().to_string();
            if !tally.failures.contains(&name) {
                tally.failures.push(name);
            }
        }
        return;
    }
    let Some(rest) = line.strip_prefix("Summary [") else {
        return;
    };
    let Some((_, counts)) = rest.split_once(" run: ") else {
        return;
    };
    for part in counts.split(',') {
        let words: Vec<&str> = part.split_whitespace().collect();
        match (words.first().and_then(|n| n.parse::<u64>().ok()), words.get(1)) {
            (Some(n), Some(&"passed")) => tally.passed += n,
            (Some(n), Some(&"failed")) | (Some(n), Some(&"timed")) => tally.failed += n,
            _ => {}
        }
    }
}

/// Playwright's list reporter ends with `  12 passed (30.1s)` and `  1 failed`;
/// a failed test's own line starts with `✘`.
fn parse_playwright_line(line: &str, tally: &mut Tally) {
    if let Some(rest) = line.trim_start().strip_prefix('✘') {
        tally.failures.push(rest.trim().to_string());
        return;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() >= 2 {
        let n: Option<u64> = words[0].parse().ok();
        match (n, words[1]) {
            (Some(n), "passed") => tally.passed += n,
            (Some(n), "failed") | (Some(n), "flaky") => tally.failed += n,
            _ => {}
        }
    }
}

const CHROMIUM: &str = "/usr/bin/chromium";
const E2E_ADMIN_EMAIL: &str = "admin@rapport.test";
const E2E_ADMIN_PASSWORD: &str = "e2e-admin-password";

/// Starts a real server on a fresh SQLite database and runs Playwright against it.
fn end_to_end(tally: &mut Tally) -> Result<bool> {
    ensure_chromium()?;
    let e2e = root().join("end2end");
    ensure_npm_packages(&e2e)?;

    let data = tempdir()?;
    // The server's own logs go to a file, shown only when a browser test fails.
    let log_path = target_dir().join("e2e-server.log");
    let (server, base_url, demo_url) = start_server("debug", &data, &log_path)?;
    // A short history, so report pages have numbers and charts to show.
    demo_data("debug", &data, &["--days", "10", "--agents", "3", "--scale", "0.3"])?;
    let ok = run_counting(
        Command::new("npx")
            .args(["playwright", "test", "--reporter=list"])
            .current_dir(&e2e)
            .env("BASE_URL", &base_url)
            .env("DEMO_URL", &demo_url)
            .env("ADMIN_EMAIL", E2E_ADMIN_EMAIL)
            .env("ADMIN_PASSWORD", E2E_ADMIN_PASSWORD)
            .env("CHROMIUM_PATH", CHROMIUM),
        Output::Stdout,
        tally,
        parse_playwright_line,
    )?;
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
    if !ok {
        let logs = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = logs.lines().rev().take(80).collect();
        eprintln!("xtask: last lines of the server log ({}):", log_path.display());
        for line in tail.into_iter().rev() {
            eprintln!("{line}");
        }
    }
    Ok(ok)
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

/// Starts `target/<profile>/rapport serve` on a fresh SQLite database in `data`,
/// with the test admin, logging to `log_path`, on a fresh port with the demo
/// shop on another: returns the server and both base URLs.
fn start_server(profile: &str, data: &Path, log_path: &Path) -> Result<(Server, String, String)> {
    let port = free_port()?;
    let demo_port = free_port()?;
    let log = std::fs::File::create(log_path)?;
    let base_url = format!("http://127.0.0.1:{port}");
    let demo_url = format!("http://127.0.0.1:{demo_port}");
    let mut server = Server(
        Command::new(target_dir().join(profile).join("rapport"))
            .arg("serve")
            .env("RAPPORT_ADDR", format!("127.0.0.1:{port}"))
            .env("RAPPORT_DEMO_ADDR", format!("127.0.0.1:{demo_port}"))
            .env("RAPPORT_DATA_DIR", data)
            .env_remove("DATABASE_URL")
            .env("RAPPORT_SITE_DIR", site_dir())
            .env("RAPPORT_PUBLIC_URL", &base_url)
            .env("RAPPORT_ADMIN_EMAIL", E2E_ADMIN_EMAIL)
            .env("RAPPORT_ADMIN_PASSWORD", E2E_ADMIN_PASSWORD)
            // The webhook tests' receiver and the co-browsing tests' site listen
            // on loopback, which production refuses as a target; private and
            // metadata addresses stay refused, as the co-browsing tests check.
            .env("RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS", "127.0.0.0/8,::1")
            // The co-browsing tests see a session end on idle; the benchmark
            // runs many sessions at once.
            .env("RAPPORT_COBROWSE_IDLE_TIMEOUT", "15s")
            .env("RAPPORT_COBROWSE_MAX_SESSIONS", "16")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("cannot start rapport")?,
    );
    wait_ready(&base_url, &mut server.0)?;
    Ok((server, base_url, demo_url))
}

/// Fills the default tenant of the database in `data` with demo history.
fn demo_data(profile: &str, data: &Path, sizes: &[&str]) -> Result<()> {
    run_cmd(
        Command::new(target_dir().join(profile).join("rapport"))
            .args(["admin", "demo-data", "--tenant", "default"])
            .args(sizes)
            .env("RAPPORT_DATA_DIR", data)
            .env_remove("DATABASE_URL")
            .stdout(Stdio::null()),
    )
}

/// Kills the server when the tests are done, even on error.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM first so the server shuts down cleanly; then make sure.
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_ready(base_url: &str, child: &mut Child) -> Result<()> {
    let addr = base_url.trim_start_matches("http://").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait()? {
            bail!("rapport exited early with {status}");
        }
        if let Ok(mut stream) = std::net::TcpStream::connect(&addr) {
            use std::io::{Read, Write};
            let _ = stream
                .write_all(format!("GET /ready HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes());
            let mut response = String::new();
            let _ = stream.read_to_string(&mut response);
            if response.starts_with("HTTP/1.1 200") {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    bail!("rapport did not become ready within 60 s")
}

fn ensure_chromium() -> Result<()> {
    if Path::new(CHROMIUM).exists() {
        return Ok(());
    }
    if !has_program("apt-get") {
        bail!("Chromium is missing at {CHROMIUM}; install Debian's `chromium` package");
    }
    run_cmd(Command::new("apt-get").arg("update"))?;
    run_cmd(Command::new("apt-get").args(["install", "-y", "--no-install-recommends", "chromium"]))
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn tempdir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("rapport-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cargo_and_playwright_results() {
        let mut t = Tally::default();
        parse_cargo_line(
            "test result: ok. 12 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
            &mut t,
        );
        parse_playwright_line("  4 passed (12.3s)", &mut t);
        parse_playwright_line("  2 failed", &mut t);
        parse_playwright_line("  ✓  1 [chromium] › login.spec.ts:3:1 › signs in (2.1s)", &mut t);
        parse_playwright_line("  ✘  2 [chromium] › calls.spec.ts:9:1 › rings (30.0s)", &mut t);
        parse_cargo_line("test it::cobrowsing::idle ... FAILED", &mut t);
        parse_cargo_line("test it::cobrowsing::ends ... ok", &mut t);
        parse_nextest_line("        FAIL [   1.204s] rapport-server::it cobrowsing::ends", &mut t);
        parse_nextest_line("        FAIL [   1.204s] rapport-server::it cobrowsing::ends", &mut t);
        parse_nextest_line(
            "     Summary [ 368.100s] 503 tests run: 500 passed (3 slow), 2 failed, 1 timed out, 4 skipped",
            &mut t,
        );
        assert_eq!((t.passed, t.failed), (516, 6));
        assert_eq!(
            t.failures,
            [
                "2 [chromium] › calls.spec.ts:9:1 › rings (30.0s)",
                "it::cobrowsing::idle",
                "rapport-server::it cobrowsing::ends"
            ]
        );
    }
}
