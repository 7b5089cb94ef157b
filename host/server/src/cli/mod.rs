//! The `outreach` command line (clap).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use outreach_core::config::{Config, DEFAULT_TOML};
use outreach_core::platform::clock::SystemClock;
use outreach_core::state::{AppState, Plugins};

mod accounts;
mod domains;
mod keys;
mod mail;
mod plugins;
mod templates;

#[derive(Debug, Parser)]
#[command(
    name = "outreach",
    version,
    about = "B2B lead intelligence and outbound email"
)]
pub struct Cli {
    /// TOML configuration file; OUTREACH_* environment variables override it.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the API server (and its workers).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Configuration helpers.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Manage accounts.
    #[command(subcommand)]
    Accounts(accounts::AccountsCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Manage reseller clients and their keys.
    #[command(subcommand)]
    Resellers(accounts::ResellersCommand),
    /// Inspect plugins: loaded list with counters, component files, folders.
    #[command(subcommand)]
    Plugins(plugins::PluginsCommand),
    /// Inspect raw email as the inbox poller would (no database needed).
    #[command(subcommand)]
    Mail(mail::MailCommand),
    /// The domain pool: import domains and their records.
    #[command(subcommand)]
    Domains(domains::DomainsCommand),
    /// Template ownership: grant, revoke and list paid templates.
    #[command(subcommand)]
    Templates(templates::TemplatesCommand),
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the default configuration file, with comments.
    PrintDefault,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // reqwest is built without a default TLS provider; install ring once for
    // every client this process makes.
    let _ = rustls::crypto::ring::default_provider().install_default();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Logs go to stderr so stdout carries only what commands print for scripts.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let command = match cli.command {
        Command::Config(ConfigCommand::PrintDefault) => {
            print!("{DEFAULT_TOML}");
            return Ok(());
        }
        Command::Mail(c) => return mail::run(c),
        other => other,
    };
    let config = Config::load(cli.config.as_deref())?;
    init_tracing(&config.log);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match command {
            Command::Serve => crate::server::serve(config).await,
            Command::Migrate => {
                // Building the state connects and migrates.
                let state = AppState::build_with(
                    config,
                    Arc::new(SystemClock),
                    Plugins::None,
                    &crate::AREAS,
                )
                .await?;
                println!("migrations applied ({:?})", state.db.backend);
                Ok(())
            }
            Command::Accounts(cmd) => accounts::run(state(config).await?, cmd).await,
            Command::Resellers(cmd) => accounts::run_resellers(state(config).await?, cmd).await,
            Command::Keys(cmd) => keys::run(state(config).await?, cmd).await,
            Command::Domains(cmd) => domains::run(state(config).await?, cmd).await,
            Command::Plugins(cmd) => plugins::run(config, cmd).await,
            Command::Templates(cmd) => templates::run(config, cmd).await,
            Command::Config(_) | Command::Mail(_) => unreachable!("handled above"),
        }
    })
}

/// State for account, key and reseller commands, which call no plugin.
async fn state(config: Config) -> anyhow::Result<AppState> {
    AppState::build_with(config, Arc::new(SystemClock), Plugins::None, &crate::AREAS).await
}

/// Turns an API error into a CLI error with its detail text.
fn cli_err(e: outreach_core::error::ApiError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

fn print_json(value: &impl serde::Serialize) {
    println!("{}", serde_json::to_string(value).expect("serialisable"));
}
