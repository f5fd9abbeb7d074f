//! Settings of `rapport serve`: every flag also reads a `RAPPORT_*` (or
//! `DATABASE_URL`) environment variable, and has a documented default. The README's
//! configuration table lists the same.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::Context;
use clap::Args;

/// Where the database is, shared by every subcommand.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// Directory for the SQLite file and other data.
    #[arg(long, env = "RAPPORT_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,

    /// `sqlite://…` or `postgres://…`. Default: `sqlite://<data dir>/rapport.db`.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,

    /// Where media (chat files, session and call recordings) is stored:
    /// `file:///absolute/dir`, or `s3://bucket[/prefix]` with the endpoint
    /// and credentials in the `AWS_*` variables (`AWS_ENDPOINT`,
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
    /// `AWS_ALLOW_HTTP`). Default: the `media` folder of the data dir.
    /// Instances that share a database must share this too.
    #[arg(long, env = "RAPPORT_MEDIA_STORE")]
    pub media_store: Option<String>,

    /// The key that seals the secrets stored in the database.
    #[command(flatten)]
    pub secret_keys: SecretKeyArgs,
}

/// The operator's key for the secrets Rapport stores and must read back: webhook
/// and alert signing secrets, identity secrets and join tokens (see
/// `rapport_core::sealing`).
#[derive(Debug, Clone, Args)]
pub struct SecretKeyArgs {
    /// 32 random bytes, as 64 hex digits or base64 (`openssl rand -base64 32`),
    /// that seal those secrets with XChaCha20-Poly1305. Unset (and no key file):
    /// they are stored in plain text, and the server says so at start.
    #[arg(long = "secret-key", env = "RAPPORT_SECRET_KEY", hide_env_values = true)]
    pub secret_key: Option<String>,

    /// A file holding the key instead (a mounted secret, say); read when
    /// `RAPPORT_SECRET_KEY` is unset.
    #[arg(long = "secret-key-file", env = "RAPPORT_SECRET_KEY_FILE")]
    pub secret_key_file: Option<PathBuf>,

    /// Keys used before the current one, comma-separated. At start every value
    /// sealed with one of them is sealed again with the current key; once the
    /// server has started they can be removed.
    #[arg(
        long = "previous-secret-keys",
        env = "RAPPORT_PREVIOUS_SECRET_KEYS",
        hide_env_values = true,
        value_delimiter = ','
    )]
    pub previous: Vec<String>,
}

impl SecretKeyArgs {
    /// The sealer for these keys; fails on a key that is not 32 bytes, or an
    /// unreadable key file.
    pub fn sealer(&self) -> anyhow::Result<rapport_core::sealing::Sealer> {
        let from_file = match (&self.secret_key, &self.secret_key_file) {
            (None, Some(path)) => Some(
                std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the secret key file {}", path.display()))?,
            ),
            _ => None,
        };
        let current = self.secret_key.as_deref().or(from_file.as_deref());
        let previous: Vec<&str> = self
            .previous
            .iter()
            .map(|k| k.trim())
            .filter(|k| !k.is_empty())
            .collect();
        rapport_core::sealing::Sealer::new(current, &previous).map_err(|e| anyhow::anyhow!("{e}"))
    }
}

impl DatabaseArgs {
    /// The database URL to use.
    pub fn url(&self) -> String {
        self.database_url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}/rapport.db", self.data_dir.display()))
    }

    /// The media store to use: the configured URL, else `<data dir>/media`.
    pub fn media_store(&self) -> anyhow::Result<rapport_core::media_store::MediaStore> {
        use anyhow::Context as _;
        use rapport_core::media_store::MediaStore;
        match &self.media_store {
            Some(url) => {
                let aws = std::env::vars().filter(|(name, _)| name.starts_with("AWS_"));
                MediaStore::open(url, aws).context("RAPPORT_MEDIA_STORE")
            }
            None => {
                let dir = std::path::absolute(self.data_dir.join("media")).context("the data dir")?;
                MediaStore::local(&dir).context("the media folder of the data dir")
            }
        }
    }
}

/// Settings of the HTTP server.
#[derive(Debug, Clone, Args)]
pub struct ServeConfig {
    /// Database location.
    #[command(flatten)]
    pub database: DatabaseArgs,

    /// Listen address.
    #[arg(long, env = "RAPPORT_ADDR", default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,

    /// Base URL under which users reach Rapport; generated links start with it.
    /// Default: `http://<addr>`. An `https://` URL also marks cookies `Secure`.
    #[arg(long, env = "RAPPORT_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// E-mail of the admin created on first start.
    #[arg(long, env = "RAPPORT_ADMIN_EMAIL")]
    pub admin_email: Option<String>,

    /// Password of the admin created on first start; generated and printed once when unset.
    #[arg(long, env = "RAPPORT_ADMIN_PASSWORD", hide_env_values = true)]
    pub admin_password: Option<String>,

    /// Directory holding the built dashboard (`pkg/` with the wasm bundle, CSS, assets).
    #[arg(long, env = "RAPPORT_SITE_DIR", default_value = "target/site")]
    pub site_dir: PathBuf,

    /// Serve the demo shop (pages with the visitor script embedded) on this
    /// address too, as another origin than Rapport's: for trying Rapport out.
    /// Unset: no demo shop. `cargo xtask run` sets `127.0.0.1:3001`.
    #[arg(long, env = "RAPPORT_DEMO_ADDR")]
    pub demo_addr: Option<SocketAddr>,

    /// The workspace (handle or id) whose widget key the demo shop embeds.
    #[arg(long, env = "RAPPORT_DEMO_WORKSPACE", default_value = "default")]
    pub demo_workspace: String,

    /// Largest accepted request body, in bytes.
    #[arg(long, env = "RAPPORT_MAX_BODY_BYTES", default_value_t = 1024 * 1024)]
    pub max_body_bytes: usize,

    /// Largest file sent in a conversation (by a visitor from the widget, by an
    /// agent from the inbox), in bytes; 0 turns files off. Files are kept in
    /// the database with their messages.
    #[arg(long, env = "RAPPORT_MAX_FILE_BYTES", default_value_t = 10 * 1024 * 1024)]
    pub max_file_bytes: usize,

    /// Where the conference media server's one UDP socket binds. Port 0 takes
    /// any free port. Put it on a public interface (e.g. `0.0.0.0:3479`) for
    /// calls beyond this machine, and say in `RAPPORT_MEDIA_PUBLIC_ADDR` where
    /// browsers reach it.
    #[arg(long, env = "RAPPORT_MEDIA_ADDR", default_value = "127.0.0.1:0")]
    pub media_addr: SocketAddr,

    /// The address browsers send media to (announced in ICE candidates): a
    /// public or LAN IP and the UDP port. Unset: the bound address.
    #[arg(long, env = "RAPPORT_MEDIA_PUBLIC_ADDR")]
    pub media_public_addr: Option<SocketAddr>,

    /// Requests taking longer than this many seconds are cancelled (408).
    #[arg(long, env = "RAPPORT_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
    pub request_timeout_secs: u64,

    /// REST requests per minute allowed per token (0 turns the limit off).
    #[arg(long, env = "RAPPORT_RATE_LIMIT_PER_TOKEN", default_value_t = 1200)]
    pub rate_limit_per_token: u32,

    /// REST requests per minute allowed per client IP (0 turns the limit off).
    #[arg(long, env = "RAPPORT_RATE_LIMIT_PER_IP", default_value_t = 2400)]
    pub rate_limit_per_ip: u32,

    /// Networks of the reverse proxies in front of Rapport, comma-separated
    /// (e.g. `10.0.0.0/8,127.0.0.1`). A request from one of them is from the
    /// client its `Forwarded` (or `X-Forwarded-For`) header names: rate limits
    /// and the audit log use that address. Empty: the TCP peer is the client,
    /// and those headers are ignored.
    #[arg(long, env = "RAPPORT_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: crate::http::client_ip::TrustedProxies,

    /// Events per minute the visitor script may report per tenant through
    /// `/widget/track` (0 turns the limit off). A batch counts as its events.
    #[arg(long, env = "RAPPORT_TRACK_EVENTS_PER_MINUTE", default_value_t = 6000)]
    pub track_events_per_minute: u32,

    /// Public requests (those with a widget key: widget, tracking, recording)
    /// one workspace runs at once on this instance; further ones wait their
    /// turn. Unset: half this machine's cores, at least 1. 0 turns it off.
    #[arg(long, env = "RAPPORT_PUBLIC_CONCURRENCY")]
    pub public_concurrency: Option<usize>,

    /// Log format: `text` or `json`.
    #[arg(long, env = "RAPPORT_LOG_FORMAT", default_value = "text")]
    pub log_format: String,

    /// An agent's presence ends at the last heartbeat when no other came within
    /// this long (humantime, e.g. `3m`). The dashboard sends one a minute.
    #[arg(long, env = "RAPPORT_PRESENCE_TIMEOUT", default_value = "3m")]
    pub presence_timeout: String,

    /// How long finished work is kept (humantime, e.g. `30d`): webhook deliveries
    /// that succeeded or failed, with their attempts, the events they delivered,
    /// sent or failed mail, the routing match log, ended SLA clocks and read
    /// notifications are deleted once older. `0` keeps them forever.
    #[arg(long, env = "RAPPORT_RETENTION", default_value = "30d")]
    pub retention: String,

    /// Where other instances reach this one (an internal URL): a co-browsing
    /// session runs on one instance, and participants who reach another are
    /// relayed here. Default: `http://<addr>`.
    #[arg(long, env = "RAPPORT_INSTANCE_URL")]
    pub instance_url: Option<String>,

    /// Co-browsing settings.
    #[command(flatten)]
    pub cobrowse: CobrowseArgs,

    /// Webhook settings.
    #[command(flatten)]
    pub webhooks: WebhookArgs,

    /// Mail settings.
    #[command(flatten)]
    pub mail: MailArgs,
}

/// Settings of outgoing e-mail.
#[derive(Debug, Clone, Args)]
pub struct MailArgs {
    /// SMTP server that sends Rapport's mail, as a URL: `smtp://host:25`,
    /// `smtp://user:password@host:587?tls=required` (STARTTLS) or
    /// `smtps://user:password@host:465`. Unset: mail is kept in the outbox, which
    /// admins read under Settings → Mail outbox.
    #[arg(long = "smtp-url", env = "RAPPORT_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,

    /// The `From` of Rapport's mail.
    #[arg(
        long = "mail-from",
        env = "RAPPORT_MAIL_FROM",
        default_value = "Rapport <rapport@localhost>"
    )]
    pub from: String,
}

/// Universal co-browsing: one server-side Chromium per session.
#[derive(Debug, Clone, Args)]
pub struct CobrowseArgs {
    /// The Chromium binary. Unset: `chromium`, `chromium-browser`,
    /// `google-chrome` or `google-chrome-stable` on `PATH`. Without one,
    /// co-browsing links say that co-browsing is unavailable.
    #[arg(long = "chromium", env = "RAPPORT_CHROMIUM")]
    pub chromium: Option<PathBuf>,

    /// A co-browsing session ends after this long without input, pointer
    /// moves or joins from anyone (humantime, e.g. `10m`).
    #[arg(long = "cobrowse-idle-timeout", env = "RAPPORT_COBROWSE_IDLE_TIMEOUT", default_value = "10m", value_parser = humantime::parse_duration)]
    pub idle_timeout: Duration,

    /// Co-browsing sessions (browsers) this instance runs at once; links of
    /// further sessions say the server is busy.
    #[arg(
        long = "cobrowse-max-sessions",
        env = "RAPPORT_COBROWSE_MAX_SESSIONS",
        default_value_t = 4
    )]
    pub max_sessions: usize,

    /// When Rapport runs as root, the user ids the browsers run as: each
    /// browser gets one of its own, held by no account, with the same number as
    /// its group (Chromium's sandbox refuses root, and a browser that loads any
    /// site should hold no rights of the server's nor reach another session's
    /// browser). Ignored when Rapport itself runs as another user.
    #[arg(long = "cobrowse-uids", env = "RAPPORT_COBROWSE_UIDS", default_value = "59000-59999")]
    pub uids: crate::cobrowse::chromium::UidRange,

    /// Run the browsers in Chromium's sandbox (it needs unprivileged user
    /// namespaces, or Chromium's setuid helper). `false` only where the kernel
    /// or container allows neither: a page that breaks out of the renderer then
    /// has the rights of the browser's user.
    #[arg(long = "cobrowse-sandbox", env = "RAPPORT_COBROWSE_SANDBOX", default_value_t = true, action = clap::ArgAction::Set)]
    pub sandbox: bool,
}

/// Settings of webhook delivery.
#[derive(Debug, Clone, Args)]
pub struct WebhookArgs {
    /// Run the delivery worker in this instance. Several instances on PostgreSQL may
    /// all run it; each attempt is still made once.
    #[arg(long = "webhook-worker", env = "RAPPORT_WEBHOOK_WORKER", default_value_t = true, action = clap::ArgAction::Set)]
    pub worker: bool,

    /// Waits before each retry, comma-separated (`100ms`, `5s`, `5m`, `2h`, `1d`). After
    /// the last, a delivery fails. Default: Svix's 8 attempts over about 27.6 hours.
    #[arg(
        long = "webhook-retry-schedule",
        env = "RAPPORT_WEBHOOK_RETRY_SCHEDULE",
        default_value = "5s,5m,30m,2h,5h,10h,10h"
    )]
    pub retry_schedule: String,

    /// An endpoint whose every attempt fails for this long is disabled (and audited).
    #[arg(
        long = "webhook-disable-after",
        env = "RAPPORT_WEBHOOK_DISABLE_AFTER",
        default_value = "5d"
    )]
    pub disable_after: String,

    /// Let webhooks and the co-browsing browser reach loopback, private,
    /// link-local and other non-public addresses: `false` (the SSRF guard
    /// refuses them all, the default), `true` (the guard is off) or a
    /// comma-separated list of networks allowed (e.g. `127.0.0.0/8,::1`).
    #[arg(
        long = "webhook-allow-private-networks",
        env = "RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS",
        default_value = "false"
    )]
    pub allow_private_networks: crate::webhooks::guard::AllowedNetworks,

    /// How long a claimed delivery stays reserved for the instance that claimed it.
    /// If that instance dies, another retries the delivery once the lease ends. Keep
    /// it above the 15 s request timeout.
    #[arg(long = "webhook-lease", env = "RAPPORT_WEBHOOK_LEASE", default_value = "60s")]
    pub lease: String,

    /// Deliveries in flight at once, per instance.
    #[arg(
        long = "webhook-concurrency",
        env = "RAPPORT_WEBHOOK_CONCURRENCY",
        default_value_t = 256
    )]
    pub concurrency: usize,
}

impl WebhookArgs {
    /// The claim lease.
    pub fn lease(&self) -> anyhow::Result<std::time::Duration> {
        humantime::parse_duration(self.lease.trim()).map_err(|e| anyhow::anyhow!("RAPPORT_WEBHOOK_LEASE: {e}"))
    }

    /// The retry policy these settings describe.
    pub fn policy(&self) -> anyhow::Result<rapport_core::webhooks::deliveries::RetryPolicy> {
        let schedule = self
            .retry_schedule
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                humantime::parse_duration(s).map_err(|e| anyhow::anyhow!("RAPPORT_WEBHOOK_RETRY_SCHEDULE: {s}: {e}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let disable_after = humantime::parse_duration(self.disable_after.trim())
            .map_err(|e| anyhow::anyhow!("RAPPORT_WEBHOOK_DISABLE_AFTER: {e}"))?;
        Ok(rapport_core::webhooks::deliveries::RetryPolicy {
            schedule: rapport_core::backoff::Backoff::new(schedule),
            disable_after,
            ..Default::default()
        })
    }
}

impl ServeConfig {
    /// The presence timeout in ms; an unreadable setting stops start-up.
    pub fn presence_timeout_ms(&self) -> anyhow::Result<i64> {
        let timeout = humantime::parse_duration(&self.presence_timeout)
            .map_err(|e| anyhow::anyhow!("RAPPORT_PRESENCE_TIMEOUT {:?}: {e}", self.presence_timeout))?;
        Ok(i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX))
    }

    /// The retention period; `None` keeps everything. An unreadable setting stops
    /// start-up.
    pub fn retention(&self) -> anyhow::Result<Option<Duration>> {
        let value = self.retention.trim();
        if value == "0" {
            return Ok(None);
        }
        let period = humantime::parse_duration(value)
            .map_err(|e| anyhow::anyhow!("RAPPORT_RETENTION {:?}: {e}", self.retention))?;
        Ok((!period.is_zero()).then_some(period))
    }

    /// The public base URL, without a trailing slash.
    pub fn public_url(&self) -> String {
        self.public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.addr))
            .trim_end_matches('/')
            .to_string()
    }

    /// Whether cookies must be `Secure` (the public URL is https).
    pub fn secure_cookies(&self) -> bool {
        self.public_url().starts_with("https://")
    }

    /// Where other instances reach this one.
    pub fn instance_url(&self) -> String {
        self.instance_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.addr))
            .trim_end_matches('/')
            .to_string()
    }

    /// The request timeout.
    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs(self.request_timeout_secs.max(1))
    }

    /// Settings for tests: SQLite or PostgreSQL at `database_url`, port 0, limits on.
    pub fn for_tests(database_url: &str) -> ServeConfig {
        ServeConfig {
            database: DatabaseArgs {
                data_dir: std::env::temp_dir(),
                database_url: Some(database_url.to_string()),
                media_store: None,
                secret_keys: SecretKeyArgs {
                    secret_key: None,
                    secret_key_file: None,
                    previous: Vec::new(),
                },
            },
            addr: "127.0.0.1:0".parse().expect("valid address"),
            public_url: Some("http://rapport.test".into()),
            admin_email: Some("admin@rapport.test".into()),
            admin_password: Some("admin-password".into()),
            site_dir: PathBuf::from("target/site"),
            demo_addr: None,
            demo_workspace: "default".into(),
            max_body_bytes: 64 * 1024,
            max_file_bytes: 256 * 1024,
            media_addr: "127.0.0.1:0".parse().expect("valid address"),
            media_public_addr: None,
            request_timeout_secs: 30,
            rate_limit_per_token: 1200,
            rate_limit_per_ip: 2400,
            trusted_proxies: Default::default(),
            track_events_per_minute: 6000,
            public_concurrency: None,
            log_format: "text".into(),
            presence_timeout: "3m".into(),
            retention: "30d".into(),
            instance_url: None,
            cobrowse: CobrowseArgs {
                chromium: None,
                idle_timeout: Duration::from_secs(600),
                max_sessions: 4,
                uids: "59000-59999".parse().expect("a valid range"),
                sandbox: true,
            },
            webhooks: WebhookArgs {
                worker: true,
                retry_schedule: "200ms,400ms,800ms".into(),
                disable_after: "5d".into(),
                // Test receivers listen on 127.0.0.1.
                allow_private_networks: crate::webhooks::guard::AllowedNetworks::All,
                lease: "60s".into(),
                concurrency: 64,
            },
            mail: MailArgs {
                smtp_url: None,
                from: "Rapport <rapport@rapport.test>".into(),
            },
        }
    }
}
