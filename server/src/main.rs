//! The `rapport` binary.

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    rapport_server::cli::main().await
}
