//! `rapport serve`: open the database, bootstrap on first start, serve until
//! SIGTERM or Ctrl-C, letting in-flight requests finish.

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context;
use leptos::config::LeptosOptions;
use rapport_core::{
    db::{redact_url, Backend},
    Services,
};
use tokio::net::TcpListener;

use crate::{
    app,
    config::{DatabaseArgs, ServeConfig},
    http::{metrics::Metrics, rate_limit::Limiters},
    state::AppState,
    webhooks::{self, WorkerSettings},
    workers,
};

/// Builds the application state for `services` and `config`.
pub fn state(config: ServeConfig, services: Services) -> AppState {
    let leptos = LeptosOptions::builder()
        .output_name("rapport")
        .site_root(config.site_dir.display().to_string())
        .site_pkg_dir("pkg")
        .site_addr(config.addr)
        .build();
    let services = services
        .with_public_url(&config.public_url())
        .with_max_file_bytes(config.max_file_bytes);
    let media = crate::media::MediaSettings {
        bind: config.media_addr,
        announce: config.media_public_addr,
        recordings_dir: config.database.data_dir.join("recordings"),
    };
    let cobrowse = crate::cobrowse::CobrowseSettings {
        chromium: config.cobrowse.chromium.clone(),
        allowed: config.webhooks.allow_private_networks.clone(),
        idle: config.cobrowse.idle_timeout,
        max_sessions: config.cobrowse.max_sessions,
        uids: config.cobrowse.uids,
        sandbox: config.cobrowse.sandbox,
        instance_url: config.instance_url(),
        width: 1280,
        height: 720,
        jpeg_quality: 70,
    };
    let limiters = Arc::new(limiters(&config, &services));
    AppState {
        conferences: Arc::new(crate::media::Conferences::new(media, services.clone())),
        cobrowsing: Arc::new(crate::cobrowse::Cobrowsing::new(cobrowse, services.clone())),
        services,
        shares: Arc::new(crate::http::fair_share::PublicShares::new(
            config
                .public_concurrency
                .unwrap_or_else(crate::http::fair_share::PublicShares::default_concurrency),
        )),
        limiters,
        metrics: Arc::new(Metrics::new()),
        config: Arc::new(config),
        leptos,
    }
}

/// The rate limiters: in memory with SQLite, whose one instance sees every
/// request; in the database with PostgreSQL, so that every instance on it
/// counts against the same limits.
fn limiters(config: &ServeConfig, services: &Services) -> Limiters {
    let (token, ip, track) = (
        config.rate_limit_per_token,
        config.rate_limit_per_ip,
        config.track_events_per_minute,
    );
    match services.db().backend() {
        Backend::Sqlite => Limiters::new(token, ip, track),
        Backend::Postgres => Limiters::shared(
            Arc::new(rapport_core::rate_windows::RateWindows::new(services.writer().clone())),
            token,
            ip,
            track,
        ),
    }
}

/// Serves `state` on `listener` until `shutdown` completes; then stops accepting
/// connections and waits for in-flight requests.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let (stop_worker, worker_stopped) = tokio::sync::watch::channel(false);
    let worker = if state.config.webhooks.worker {
        let settings = WorkerSettings {
            policy: state.config.webhooks.policy()?,
            allow_private_networks: state.config.webhooks.allow_private_networks.clone(),
            concurrency: state.config.webhooks.concurrency,
            lease: state.config.webhooks.lease()?,
        };
        Some(webhooks::spawn(state.services.clone(), settings, worker_stopped))
    } else {
        None
    };
    // Timers, mail, retention and the presence sweep: the one job runner.
    let handlers = workers::Handlers {
        mail: crate::mail::MailSettings::from_config(&state.config.mail)?,
        retention: state.config.retention()?,
        presence_timeout_ms: Some(state.config.presence_timeout_ms()?),
        probe: None,
    };
    let runner = workers::spawn(
        state.services.clone(),
        handlers,
        workers::RunnerSettings::default(),
        stop_worker.subscribe(),
    );
    // Each instance prunes its own limiters (and, on PostgreSQL, the shared
    // counters: a delete that any instance may run): a plain interval.
    let (limiters, shares) = (state.limiters.clone(), state.shares.clone());
    let pruner = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tick.tick().await;
            limiters.prune().await;
            shares.prune();
        }
    });
    // With several instances on PostgreSQL, live screens also hear the changes
    // made through the others. A held connection, not work that falls due: it
    // stays out of the job runner.
    let relay = (state.services.db().backend() == Backend::Postgres).then(|| {
        let services = state.services.clone();
        tokio::spawn(async move {
            loop {
                if let Err(err) = services.relay_live_changes().await {
                    tracing::warn!(error = %err, "hearing other instances' changes failed; retrying in 5 s");
                }
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        })
    });
    let conferences = state.conferences.clone();
    let cobrowsing = state.cobrowsing.clone();
    tokio::spawn({
        let cobrowsing = cobrowsing.clone();
        async move { cobrowsing.report().await }
    });
    let router = app::build(state);
    let result = axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(shutdown)
        .await;
    // Calls end with the process; what they recorded is kept.
    conferences.shutdown().await;
    // Co-browsing browsers close with the process; their sessions are recorded.
    cobrowsing.shutdown().await;
    pruner.abort();
    if let Some(relay) = relay {
        relay.abort();
    }
    let _ = stop_worker.send(true);
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    let _ = runner.await;
    result.context("server error")
}

/// Opens and migrates the database named by the settings, with the configured
/// sealing keys. Stored secrets are left as they are: only `serve` and
/// `migrate` reseal them (see [`open_and_reseal`]), so that a one-off admin
/// command run with other keys never rewrites what running instances read.
pub async fn open_services(database: &DatabaseArgs) -> anyhow::Result<Services> {
    let sealer = database.secret_keys.sealer()?;
    let url = database.url();
    let db = rapport_core::db::Db::connect(&url)
        .await
        .with_context(|| format!("cannot open database {}", redact_url(&url)))?;
    db.migrate().await.context("cannot apply migrations")?;
    let media = database.media_store()?;
    tracing::debug!(store = media.location(), "media store");
    Ok(Services::new(db).with_sealer(sealer).with_media_store(media))
}

/// [`open_services`], then stores every sealed secret as the configured key
/// would (see `Services::reseal_secrets`): what `serve` and `migrate` do.
pub async fn open_and_reseal(database: &DatabaseArgs) -> anyhow::Result<Services> {
    let services = open_services(database).await?;
    let resealed = services
        .reseal_secrets()
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot read the stored secrets")?;
    if resealed > 0 {
        tracing::info!(rows = resealed, key = ?services.sealer().key_id(), "stored secrets sealed with the current key");
    }
    Ok(services)
}

/// `rapport serve`.
pub async fn run(config: ServeConfig) -> anyhow::Result<()> {
    let url = config.database.url();
    tracing::info!(database = %redact_url(&url), "opening database");
    let services = open_and_reseal(&config.database).await?;
    if services.sealer().key_id().is_none() {
        tracing::warn!(
            "RAPPORT_SECRET_KEY is not set: webhook, alert and identity secrets and join tokens \
             are stored in the database in plain text; see the README's Security section"
        );
    }
    if let Some(created) = services
        .bootstrap(config.admin_email.as_deref(), config.admin_password.as_deref())
        .await
        .context("first-start bootstrap failed")?
    {
        println!(
            "First start: created workspace '{}' with admin {}.",
            created.tenant_slug, created.admin_email
        );
        match created.generated_password {
            Some(password) => println!("Generated admin password (shown only now): {password}"),
            None => println!("The admin's password is RAPPORT_ADMIN_PASSWORD."),
        }
    }
    let listener = TcpListener::bind(config.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.addr))?;
    let addr = listener.local_addr()?;
    let public_url = config.public_url();
    let db = services.db().clone();
    println!("Rapport is running at {public_url} (listening on {addr}). Sign in at {public_url}/login");
    if let Some(demo_addr) = config.demo_addr {
        // It ends with the process; nothing in it needs a graceful stop. A demo
        // that cannot start (its port taken) must not keep Rapport from serving.
        match crate::demo::serve(
            demo_addr,
            services.clone(),
            config.site_dir.clone(),
            public_url.clone(),
            config.demo_workspace.clone(),
            std::future::pending(),
        )
        .await
        {
            Ok(demo) => println!("The demo shop, with the visitor script, is at http://{demo}/"),
            Err(err) => tracing::warn!(error = %err, "the demo shop is not served"),
        }
    }
    serve(listener, state(config, services), shutdown_signal()).await?;
    db.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Completes on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutdown requested; finishing in-flight requests");
}
