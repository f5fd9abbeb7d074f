//! A release `rapport serve` process for the benchmarks that talk HTTP to it.
// Each bench includes this file and uses part of it.
#![allow(dead_code)]

use std::{
    net::TcpListener as StdListener,
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

/// The `rapport` binary Cargo built for this bench (release profile), or, should
/// the variable be missing, the one under the target directory's `release/`.
pub fn rapport_binary() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_rapport"));
    if built.exists() {
        return built;
    }
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    Path::new(&target).join("release").join("rapport")
}

/// A running `rapport serve`; stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Server {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// Where its output goes.
    pub log: PathBuf,
}

impl Server {
    /// Starts `rapport serve` on `database_url` with rate limits off, and waits
    /// until it is healthy.
    pub async fn start(database_url: &str, data_dir: &Path) -> Server {
        Server::start_with(database_url, data_dir, &[]).await
    }

    /// [`Server::start`] with more environment variables.
    pub async fn start_with(database_url: &str, data_dir: &Path, env: &[(&str, &str)]) -> Server {
        // Bind and release: the port is free for the instant the server needs it.
        let port = StdListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = data_dir.join("server.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(rapport_binary())
            .arg("serve")
            .env("RAPPORT_ADDR", format!("127.0.0.1:{port}"))
            .env("RAPPORT_DATA_DIR", data_dir)
            .env("DATABASE_URL", database_url)
            .env("RAPPORT_RATE_LIMIT_PER_TOKEN", "0")
            .env("RAPPORT_RATE_LIMIT_PER_IP", "0")
            // The failing receivers of figure 3 are on loopback.
            .env("RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS", "true")
            .env_remove("RAPPORT_ADMIN_EMAIL")
            .env_remove("RAPPORT_ADMIN_PASSWORD")
            .envs(env.iter().copied())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", rapport_binary().display()));
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
        };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = client.get(format!("{}/health", server.base)).send().await {
                if r.status().is_success() {
                    return server;
                }
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(&server.log).unwrap_or_default();
                panic!("rapport did not become healthy in 60 s; its log:\n{log}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// VmRSS of the server process, in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A graceful stop first, so the database is closed cleanly.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
