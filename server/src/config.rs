//! Settings of `rapport serve`: every flag also reads a `RAPPORT_*` (or
//! `DATABASE_URL`) environment variable, and has a documented default. The README's
//! configuration table lists the same.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

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
}

impl DatabaseArgs {
    /// The database URL to use.
    pub fn url(&self) -> String {
        self.database_url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}/rapport.db", self.data_dir.display()))
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

    /// Largest accepted request body, in bytes.
    #[arg(long, env = "RAPPORT_MAX_BODY_BYTES", default_value_t = 1024 * 1024)]
    pub max_body_bytes: usize,

    /// Requests taking longer than this many seconds are cancelled (408).
    #[arg(long, env = "RAPPORT_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
    pub request_timeout_secs: u64,

    /// REST requests per minute allowed per token (0 turns the limit off).
    #[arg(long, env = "RAPPORT_RATE_LIMIT_PER_TOKEN", default_value_t = 1200)]
    pub rate_limit_per_token: u32,

    /// REST requests per minute allowed per client IP (0 turns the limit off).
    #[arg(long, env = "RAPPORT_RATE_LIMIT_PER_IP", default_value_t = 2400)]
    pub rate_limit_per_ip: u32,

    /// Log format: `text` or `json`.
    #[arg(long, env = "RAPPORT_LOG_FORMAT", default_value = "text")]
    pub log_format: String,
}

impl ServeConfig {
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
            },
            addr: "127.0.0.1:0".parse().expect("valid address"),
            public_url: Some("http://rapport.test".into()),
            admin_email: Some("admin@rapport.test".into()),
            admin_password: Some("admin-password".into()),
            site_dir: PathBuf::from("target/site"),
            max_body_bytes: 64 * 1024,
            request_timeout_secs: 30,
            rate_limit_per_token: 1200,
            rate_limit_per_ip: 2400,
            log_format: "text".into(),
        }
    }
}
