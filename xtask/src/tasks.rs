//! The `run`, `build` and `test` commands.

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};

use crate::{
    site::{build_site, SiteProfile},
    tally::{parse_cargo_line, parse_nextest_line, parse_playwright_line, run_counting, Output, Tally},
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

pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";
pub(crate) const E2E_ADMIN_EMAIL: &str = "admin@rapport.test";
pub(crate) const E2E_ADMIN_PASSWORD: &str = "e2e-admin-password";

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

/// Starts `target/<profile>/rapport serve` on a fresh SQLite database in `data`,
/// with the test admin, logging to `log_path`, on a fresh port with the demo
/// shop on another: returns the server and both base URLs.
pub(crate) fn start_server(profile: &str, data: &Path, log_path: &Path) -> Result<(Server, String, String)> {
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
pub(crate) fn demo_data(profile: &str, data: &Path, sizes: &[&str]) -> Result<()> {
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
pub(crate) struct Server(pub(crate) Child);

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

pub(crate) fn ensure_chromium() -> Result<()> {
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

pub(crate) fn tempdir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("rapport-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
