//! A real `rapport serve` process for tests that kill and restart it: started on
//! port 0 against a test database with the given environment, and SIGKILLed when
//! dropped (or by [`Instance::kill`]), as a crash would end it.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use rapport_core::testing::TestDb;

/// A running `rapport serve`.
pub struct Instance {
    child: Child,
    killed: bool,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl Instance {
    /// Starts `rapport serve` on `db` with `env` on top of test settings (rate
    /// limits off, private webhook targets allowed), and waits for its banner.
    pub fn start(db: &TestDb, env: &[(&str, String)]) -> Instance {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rapport"));
        command
            .args(["serve", "--addr", "127.0.0.1:0"])
            .env("DATABASE_URL", &db.url)
            .env("RAPPORT_DATA_DIR", std::env::temp_dir())
            // The test's own media folder, shared by its instances.
            .env("RAPPORT_MEDIA_STORE", db.media_url())
            .env("RAPPORT_ADMIN_EMAIL", "admin@rapport.test")
            .env("RAPPORT_ADMIN_PASSWORD", "admin-password")
            .env("RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS", "true")
            .env("RAPPORT_RATE_LIMIT_PER_TOKEN", "0")
            .env("RAPPORT_RATE_LIMIT_PER_IP", "0")
            .env_remove("RAPPORT_SMTP_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut line = String::new();
        while Instant::now() < deadline && !line.contains("Rapport is running") {
            line.clear();
            if stdout.read_line(&mut line).unwrap() == 0 {
                break;
            }
        }
        let addr = line
            .split("listening on ")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .unwrap_or_else(|| panic!("no banner: {line}"))
            .to_string();
        // Keep draining stdout so the process never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while stdout.read_line(&mut sink).unwrap_or(0) > 0 {
                sink.clear();
            }
        });
        Instance {
            child,
            killed: false,
            base: format!("http://{addr}"),
        }
    }

    /// Ends the process with SIGKILL: nothing runs on the way out.
    pub fn kill(&mut self) {
        if std::mem::replace(&mut self.killed, true) {
            return;
        }
        let _ = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}
