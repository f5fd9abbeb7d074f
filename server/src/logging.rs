//! Structured logs to stderr (stdout is for command output). `RUST_LOG` filters;
//! the default is `info` for Rapport and `warn` for libraries.

use tracing_subscriber::{fmt, prelude::*, EnvFilter};

/// Installs the global subscriber; `format` is `text` or `json`. Idempotent.
pub fn init(format: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new("warn,rapport_server=info,rapport_core=info,rapport_app=info,tower_http=info")
    });
    let registry = tracing_subscriber::registry().with(filter);
    let result = if format == "json" {
        registry
            .with(fmt::layer().json().with_writer(std::io::stderr))
            .try_init()
    } else {
        registry.with(fmt::layer().with_writer(std::io::stderr)).try_init()
    };
    let _ = result;
}
