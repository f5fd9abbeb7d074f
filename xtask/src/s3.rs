//! The S3-compatible server that the media-store tests run against: Garage
//! (<https://garagehq.deuxfleurs.fr>), a production object store written in
//! Rust, installed from crates.io with `cargo install` (this machine reaches
//! no other download) and started on loopback for the test run.
//!
//! Why Garage: it is a real S3 implementation that self-hosters run in
//! production, not a mock (moto) nor a test double, and it builds from
//! crates.io with the machine's toolchain. MinIO and SeaweedFS ship as
//! binaries from their own sites, which this machine cannot reach; s3s-fs
//! needs a newer rustc.
//!
//! The binary is built once per machine, into the target directory's
//! `tools/` folder (a few minutes, cached like the rest of the target).
//! Each run starts a fresh single-node cluster in a temporary folder with one
//! bucket and one key, and the tests get them as `RAPPORT_TEST_S3_*`.

use std::{
    io::Read,
    net::TcpListener,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};

use crate::tools::{run, target_dir};

/// The Garage release the tests use.
const VERSION: &str = "2.5.0";
/// The bucket the tests write to (each test under a prefix of its own).
const BUCKET: &str = "rapport-test";
/// The region Garage answers for.
const REGION: &str = "garage";

/// A running Garage, stopped when dropped.
pub struct Garage {
    child: Child,
    dir: PathBuf,
    /// What the tests read: `RAPPORT_TEST_S3_URL`, `_ENDPOINT`, `_REGION`,
    /// `_KEY_ID` and `_SECRET`.
    pub env: Vec<(String, String)>,
}

impl Drop for Garage {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The installed binary, built first if missing.
fn binary() -> Result<PathBuf> {
    let root = target_dir().join("tools").join(format!("garage-{VERSION}"));
    let garage = root.join("bin").join("garage");
    if garage.exists() {
        return Ok(garage);
    }
    let mut install = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    install
        .args(["install", "garage", "--version", VERSION, "--locked"])
        // SQLite for its metadata: no LMDB, metrics or K2V to build.
        .args(["--no-default-features", "--features", "sqlite,bundled-libs"])
        .arg("--root")
        .arg(&root)
        .arg("--target-dir")
        .arg(target_dir().join("tools").join("build"))
        // Not Rapport's code: no clippy, and none of this task's settings.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .env_remove("RUSTFLAGS");
    run(&mut install).context("cannot install Garage, the S3 server of the media-store tests")?;
    // Its build is not needed again: the binary is.
    let _ = std::fs::remove_dir_all(target_dir().join("tools").join("build"));
    Ok(garage)
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn random_hex(bytes: usize) -> Result<String> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

impl Garage {
    /// Installs (once) and starts Garage with a bucket and a key.
    pub fn start() -> Result<Garage> {
        let binary = binary()?;
        let dir = std::env::temp_dir().join(format!("rapport-garage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let (s3_port, rpc_port, admin_port) = (free_port()?, free_port()?, free_port()?);
        let config = dir.join("garage.toml");
        std::fs::write(
            &config,
            format!(
                r#"metadata_dir = "{dir}/meta"
data_dir = "{dir}/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:{rpc_port}"
rpc_public_addr = "127.0.0.1:{rpc_port}"
rpc_secret = "{secret}"

[s3_api]
s3_region = "{REGION}"
api_bind_addr = "127.0.0.1:{s3_port}"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:{admin_port}"
admin_token = "{token}"
"#,
                dir = dir.display(),
                secret = random_hex(32)?,
                token = random_hex(16)?,
            ),
        )?;
        let log = std::fs::File::create(dir.join("garage.log"))?;
        let child = Command::new(&binary)
            .arg("-c")
            .arg(&config)
            .arg("server")
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("cannot start Garage")?;
        let mut garage = Garage {
            child,
            dir,
            env: Vec::new(),
        };
        let cli = |args: &[&str]| -> Result<String> {
            let out = Command::new(&binary)
                .arg("-c")
                .arg(&config)
                .args(args)
                .stdin(Stdio::null())
                .output()
                .with_context(|| format!("garage {}", args.join(" ")))?;
            if !out.status.success() {
                bail!(
                    "garage {} failed: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let started = Instant::now();
        while cli(&["status"]).is_err() {
            if started.elapsed() > Duration::from_secs(60) {
                bail!(
                    "Garage did not start within 60 s; see {}",
                    garage.dir.join("garage.log").display()
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let node = cli(&["node", "id", "-q"])?;
        let node = node.trim().split('@').next().unwrap_or_default().to_string();
        cli(&["layout", "assign", "-z", "local", "-c", "1G", &node])?;
        cli(&["layout", "apply", "--version", "1"])?;
        let key_id = format!("GK{}", random_hex(12)?);
        let secret = random_hex(32)?;
        cli(&["key", "import", "--yes", "-n", "rapport-test", &key_id, &secret])?;
        cli(&["bucket", "create", BUCKET])?;
        cli(&[
            "bucket", "allow", "--read", "--write", "--owner", "--key", &key_id, BUCKET,
        ])?;
        eprintln!("xtask: Garage {VERSION} serves S3 at 127.0.0.1:{s3_port}");
        garage.env = vec![
            ("RAPPORT_TEST_S3_URL".into(), format!("s3://{BUCKET}")),
            ("RAPPORT_TEST_S3_ENDPOINT".into(), format!("http://127.0.0.1:{s3_port}")),
            ("RAPPORT_TEST_S3_REGION".into(), REGION.into()),
            ("RAPPORT_TEST_S3_KEY_ID".into(), key_id),
            ("RAPPORT_TEST_S3_SECRET".into(), secret),
        ];
        Ok(garage)
    }
}
