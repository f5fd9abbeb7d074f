//! The `rapport` command line: `serve` (the default), `migrate`, and `admin`
//! subcommands for provisioning from scripts. Admin commands print one JSON
//! object (or, for `create-api-key`, the bare token) on stdout; logs go to stderr.

use anyhow::Context;
use clap::{Parser, Subcommand};
use rapport_core::{audit::Actor, model::Role, tenants::NewTenant, users::NewUser};
use serde_json::json;

use crate::{
    config::{DatabaseArgs, ServeConfig},
    serve,
};

/// Rapport: self-hosted, multi-tenant customer engagement.
#[derive(Debug, Parser)]
#[command(name = "rapport", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Settings for the default `serve` command.
    #[command(flatten)]
    serve: ServeConfig,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the dashboard and the API (the default).
    Serve(Box<ServeConfig>),
    /// Apply database migrations and exit (they also run at start).
    Migrate(DatabaseArgs),
    /// Provisioning commands for scripts.
    #[command(subcommand)]
    Admin(AdminCommand),
}

// The variants mirror the subcommand names (`create-tenant`, …) operators type.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Create a tenant; prints `{"id","slug"}`.
    CreateTenant {
        #[command(flatten)]
        database: DatabaseArgs,
        /// Display name.
        #[arg(long)]
        name: String,
        /// Unique handle; derived from the name when omitted.
        #[arg(long)]
        slug: Option<String>,
        /// IANA time zone.
        #[arg(long, default_value = "UTC")]
        timezone: String,
    },
    /// Create a dashboard user; prints `{"id","email"}` plus `generatedPassword`
    /// when no password was given.
    CreateUser {
        #[command(flatten)]
        database: DatabaseArgs,
        /// Tenant id or slug.
        #[arg(long)]
        tenant: String,
        /// E-mail address.
        #[arg(long)]
        email: String,
        /// Password; generated when omitted. Also read from RAPPORT_NEW_USER_PASSWORD.
        #[arg(long, env = "RAPPORT_NEW_USER_PASSWORD", hide_env_values = true)]
        password: Option<String>,
        /// ADMIN, SUPERVISOR or AGENT.
        #[arg(long, default_value = "AGENT", value_parser = parse_role)]
        role: Role,
        /// Name shown in the UI.
        #[arg(long)]
        display_name: Option<String>,
        /// Also make the user a platform admin (manages every tenant).
        #[arg(long)]
        platform_admin: bool,
    },
    /// Create a tenant API key; prints the token and nothing else.
    CreateApiKey {
        #[command(flatten)]
        database: DatabaseArgs,
        /// Tenant id or slug.
        #[arg(long)]
        tenant: String,
        /// What the key is for.
        #[arg(long)]
        name: String,
    },
    /// Set a tenant's bounds, as `PUT /rest/v1/tenant/{id}/limits` does (a
    /// platform operator's decision; audited); prints them all.
    SetLimits {
        #[command(flatten)]
        database: DatabaseArgs,
        /// Tenant id or slug.
        #[arg(long)]
        tenant: String,
        /// The changes as JSON, e.g. `{"cobrowseSessions": 16}` (`null`: the default).
        #[arg(long)]
        limits: String,
    },
    /// Fill a tenant with a realistic report history: agents with shifts and
    /// breaks, conversations, visits with resources and script errors, rule matches
    /// and SLA outcomes, co-browse sessions and conferences. Prints a summary.
    DemoData {
        #[command(flatten)]
        database: DatabaseArgs,
        /// Tenant id or slug.
        #[arg(long)]
        tenant: String,
        /// Days of history, ending now.
        #[arg(long, default_value_t = 30)]
        days: u32,
        /// Agents (created as agentNN@demo.rapport.invalid when missing).
        #[arg(long, default_value_t = 8)]
        agents: u32,
        /// Traffic multiplier; 1 is about 470 facts per agent and working day.
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Random seed (the same seed gives the same history).
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Move the media that database rows still hold (written before media
    /// moved to the media store) into the media store. Serving goes on
    /// meanwhile, and an interrupted run is simply run again: what moved
    /// stays moved. Prints what moved.
    MigrateMedia {
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

fn parse_role(value: &str) -> Result<Role, String> {
    Role::parse(&value.to_uppercase()).ok_or_else(|| "expected ADMIN, SUPERVISOR or AGENT".to_string())
}

/// Parses the command line and runs the command.
pub async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        None => {
            crate::logging::init(&cli.serve.log_format);
            serve::run(cli.serve).await
        }
        Some(Command::Serve(config)) => {
            crate::logging::init(&config.log_format);
            serve::run(*config).await
        }
        Some(Command::Migrate(database)) => {
            crate::logging::init("text");
            serve::open_and_reseal(&database).await?;
            eprintln!("migrations applied");
            Ok(())
        }
        Some(Command::Admin(cmd)) => {
            crate::logging::init("text");
            admin(cmd).await
        }
    }
}

async fn admin(cmd: AdminCommand) -> anyhow::Result<()> {
    let actor = Actor::system("cli");
    match cmd {
        AdminCommand::CreateTenant {
            database,
            name,
            slug,
            timezone,
        } => {
            let services = serve::open_services(&database).await?;
            let tenant = services
                .create_tenant(
                    NewTenant {
                        name: Some(name),
                        slug,
                        timezone: Some(timezone),
                    },
                    &actor,
                )
                .await
                .map_err(describe)?;
            println!("{}", json!({ "id": tenant.id, "slug": tenant.slug }));
        }
        AdminCommand::CreateUser {
            database,
            tenant,
            email,
            password,
            role,
            display_name,
            platform_admin,
        } => {
            let (services, tenant) = open_in_tenant(&database, &tenant).await?;
            let created = services
                .create_user(
                    NewUser {
                        tenant_id: tenant.id,
                        email,
                        password,
                        role,
                        display_name,
                        platform_admin,
                    },
                    &actor,
                )
                .await
                .map_err(describe)?;
            let mut out = json!({ "id": created.id, "email": created.email });
            if let Some(p) = created.generated_password {
                out["generatedPassword"] = json!(p);
            }
            println!("{out}");
        }
        AdminCommand::CreateApiKey { database, tenant, name } => {
            let (services, tenant) = open_in_tenant(&database, &tenant).await?;
            let created = services
                .create_api_key(&tenant.id, &name, &actor)
                .await
                .map_err(describe)?;
            println!("{}", created.token);
        }
        AdminCommand::DemoData {
            database,
            tenant,
            days,
            agents,
            scale,
            seed,
        } => {
            let (services, tenant) = open_in_tenant(&database, &tenant).await?;
            let options = rapport_core::reports::demo::DemoOptions {
                days,
                agents,
                scale,
                seed,
            };
            let summary = services
                .generate_demo_data(&tenant.id, &options)
                .await
                .map_err(describe)?;
            println!("{}", json!({"facts": summary.facts, "agents": summary.agents}));
        }
        AdminCommand::MigrateMedia { database } => {
            let services = serve::open_services(&database).await?;
            eprintln!("moving media into {}", services.media().location());
            let moved = services.migrate_media().await.map_err(describe)?;
            println!("{}", serde_json::to_string(&moved)?);
        }
        AdminCommand::SetLimits {
            database,
            tenant,
            limits,
        } => {
            let changes: rapport_core::limits::TenantLimitsIn =
                serde_json::from_str(&limits).context("--limits is not a JSON object of bounds")?;
            let (services, tenant) = open_in_tenant(&database, &tenant).await?;
            let set = services
                .set_tenant_limits(&tenant.id, changes, &actor)
                .await
                .map_err(describe)?;
            println!("{}", serde_json::to_string(&set)?);
        }
    }
    Ok(())
}

/// The services on `database`, and the tenant (id or slug) a command works in.
async fn open_in_tenant(
    database: &DatabaseArgs,
    tenant: &str,
) -> anyhow::Result<(rapport_core::Services, rapport_core::model::Tenant)> {
    let services = serve::open_services(database).await?;
    let tenant = services
        .find_tenant(tenant)
        .await
        .map_err(describe)
        .context("unknown tenant")?;
    Ok((services, tenant))
}

/// A readable one-line description of a domain error for the terminal.
fn describe(err: rapport_core::CoreError) -> anyhow::Error {
    match err {
        rapport_core::CoreError::Validation(fields) => anyhow::anyhow!(
            "invalid input: {}",
            fields
                .iter()
                .map(|f| format!("{}: {}", f.field, f.message))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        other => anyhow::anyhow!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
