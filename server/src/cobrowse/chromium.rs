//! Finding and starting the Chromium that co-browsing sessions run in.
//!
//! Each session gets its own browser process with a throw-away profile
//! directory: no cookie, cache or storage of one session can reach another,
//! and when the session ends the process is killed and the directory removed,
//! so nothing is kept. Every connection the browser makes goes through the
//! session's guard proxy ([`super::proxy`]), loopback included.
//!
//! The browser loads whatever site a link names, so it holds as few rights as
//! it can: it runs in Chromium's sandbox, and when Rapport runs as root (where
//! the sandbox refuses to start) each browser runs as a user id of its own,
//! taken from a range no account holds (`RAPPORT_COBROWSE_UIDS`), instead of
//! with `--no-sandbox`. A page that broke out of one browser could then read
//! neither another session's browser nor its profile, nor any file of the
//! server's.

use std::{
    fmt,
    fs::File,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::Stdio,
    str::FromStr,
    time::Duration,
};

use anyhow::{bail, Context};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

/// How long Chromium may take to open its DevTools endpoint.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Names Chromium goes by on `PATH`, in the order they are tried.
const NAMES: [&str; 4] = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/// The Chromium binary: `configured` if set, else the first of [`NAMES`] on `PATH`.
pub fn locate(configured: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = configured {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(format!(
                "RAPPORT_CHROMIUM names {}, which does not exist",
                path.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(
        "Chromium is not installed on this server (install Debian's `chromium` package, or set RAPPORT_CHROMIUM)"
            .into(),
    )
}

/// The version `binary` reports, e.g. `Chromium 156.0.8078.73`.
pub async fn version(binary: &Path) -> Result<String, String> {
    let output = tokio::time::timeout(Duration::from_secs(20), Command::new(binary).arg("--version").output())
        .await
        .map_err(|_| "Chromium did not say its version within 20 s".to_string())?
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    if !output.status.success() {
        return Err(format!("{} --version failed", binary.display()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// The user ids browsers run as when Rapport runs as root: `first-last`. Each
/// running browser holds one of them alone; the group id is the same number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UidRange {
    first: u32,
    last: u32,
}

impl UidRange {
    /// How many ids it holds: how many browsers can run at once on this host.
    fn size(&self) -> u32 {
        self.last - self.first + 1
    }
}

impl FromStr for UidRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (first, last) = text
            .split_once('-')
            .ok_or_else(|| format!("`{text}` is not a range of user ids such as 59000-59999"))?;
        let id = |t: &str| t.trim().parse::<u32>().map_err(|_| format!("`{t}` is not a user id"));
        let (first, last) = (id(first)?, id(last)?);
        if first == 0 || last < first {
            return Err(format!("`{text}` must run upwards from above 0 (root)"));
        }
        Ok(UidRange { first, last })
    }
}

impl fmt::Display for UidRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

/// A user id held by one browser while it runs. Holding the id is holding an
/// exclusive lock on a file named after it (in the temporary directory, readable
/// by root alone), so Rapport instances on one host never share an id either;
/// dropping the lease frees it.
struct UidLease {
    uid: u32,
    _lock: File,
}

impl UidLease {
    /// A free id of `range`, looked for from a varying place in it (so
    /// instances starting browsers together rarely try the same ids).
    fn take(range: UidRange) -> anyhow::Result<UidLease> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let start = (nanos ^ std::process::id()) % range.size();
        for step in 0..range.size() {
            let uid = range.first + (start + step) % range.size();
            let path = std::env::temp_dir().join(format!("rapport-cobrowse-uid-{uid}.lock"));
            let file = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            if file.try_lock().is_ok() {
                return Ok(UidLease { uid, _lock: file });
            }
        }
        bail!("every user id of RAPPORT_COBROWSE_UIDS ({range}) is held by a running browser")
    }
}

/// Starts browsers: the binary, the user ids they run as, and whether sandboxed.
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The Chromium binary.
    pub binary: PathBuf,
    /// Set when Rapport runs as root: the ids browsers run as, one each.
    uids: Option<UidRange>,
    sandbox: bool,
}

impl Launcher {
    /// A launcher of `binary`. When this process runs as root, each browser runs
    /// as an id of its own from `uids`.
    pub fn new(binary: PathBuf, uids: UidRange, sandbox: bool) -> Launcher {
        Launcher {
            binary,
            uids: running_as_root().then_some(uids),
            sandbox,
        }
    }

    /// Whom the browsers run as, for the start-up log.
    pub fn describe_user(&self) -> String {
        match &self.uids {
            Some(range) => format!("a user id of its own from {range}"),
            None => "Rapport's own user".into(),
        }
    }

    /// Starts a browser headless with a fresh profile, sending every request
    /// through the proxy at `proxy`, its window `width`×`height`.
    pub async fn launch(&self, proxy: SocketAddr, width: u32, height: u32) -> anyhow::Result<Browser> {
        Browser::launch(self, proxy, width, height).await
    }
}

/// A running browser. Dropping it kills the process and removes its profile.
pub struct Browser {
    child: Child,
    /// Removed on drop.
    _profile: tempfile::TempDir,
    /// The user id it runs as, when Rapport runs as root: freed last.
    _uid: Option<UidLease>,
    /// The browser's DevTools WebSocket.
    pub ws_url: String,
}

impl Browser {
    async fn launch(launcher: &Launcher, proxy: SocketAddr, width: u32, height: u32) -> anyhow::Result<Browser> {
        let binary = &launcher.binary;
        let profile = tempfile::Builder::new()
            .prefix("rapport-cobrowse-")
            .tempdir()
            .context("cannot make a profile directory")?;
        let mut command = Command::new(binary);
        let uid = launcher.uids.map(UidLease::take).transpose()?;
        if let Some(lease) = &uid {
            // The browser's user owns its profile, and nothing else of ours
            // (std drops the supplementary groups when it sets the ids).
            std::os::unix::fs::chown(profile.path(), Some(lease.uid), Some(lease.uid))
                .context("cannot hand the profile directory to the browser's user")?;
            command.uid(lease.uid).gid(lease.uid);
        }
        // The browser loads any site: it gets none of the server's environment
        // (the secret key, the database URL and its password), only what it
        // needs to run. Caches and crash reports go under HOME: the profile.
        command.env_clear();
        for name in ["PATH", "LANG", "LC_ALL", "TZ"] {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        command
            .env("HOME", profile.path())
            .env("XDG_CONFIG_HOME", profile.path())
            .env("XDG_CACHE_HOME", profile.path());
        command
            .args([
                "--headless",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-default-apps",
                "--no-first-run",
                "--no-default-browser-check",
                "--mute-audio",
                "--password-store=basic",
                "--use-mock-keychain",
                // Chromium's own features that would call home or prompt.
                "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--proxy-server=http://{proxy}"))
            // Chromium sends loopback past any proxy unless told not to: the guard
            // must see those requests too.
            .arg("--proxy-bypass-list=<-loopback>");
        // Only where the operator turned the sandbox off (the kernel allows it
        // no user namespaces); the browser still runs as an unprivileged user.
        if !launcher.sandbox {
            command.arg("--no-sandbox");
        }
        command
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let stderr = child.stderr.take().context("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let found = tokio::time::timeout(START_TIMEOUT, async {
            while let Some(line) = lines.next_line().await? {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return Ok::<_, std::io::Error>(Some(url.trim().to_string()));
                }
            }
            Ok(None)
        })
        .await;
        let ws_url = match found {
            Ok(Ok(Some(url))) => url,
            Ok(Ok(None)) | Ok(Err(_)) => bail!("Chromium exited before opening its DevTools endpoint"),
            Err(_) => bail!(
                "Chromium did not open its DevTools endpoint within {} s",
                START_TIMEOUT.as_secs()
            ),
        };
        // Keep draining stderr, or a chatty browser would block on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Browser {
            child,
            _profile: profile,
            _uid: uid,
            ws_url,
        })
    }

    /// Kills the browser and waits for it, so its profile can be removed and its
    /// user id be given to the next.
    pub async fn close(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Whether this process runs as root (uid 0), read from `/proc`.
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}
