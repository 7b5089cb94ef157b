//! `outreach accounts ...` and `outreach resellers ...`.

use clap::{Args, Subcommand};
use serde_json::json;

use super::{cli_err, print_json};
use outreach_core::accounts::plans::Plan;
use outreach_core::accounts::reseller::{self, ClientUpdate, NewClient};
use outreach_core::accounts::service;
use outreach_core::state::AppState;

fn parse_plan(s: &str) -> Result<Plan, String> {
    Plan::parse(s).ok_or_else(|| "plan must be free, starter, pro or enterprise".to_string())
}

#[derive(Debug, Subcommand)]
pub enum AccountsCommand {
    /// Create an account with its owner and a first API key.
    Create {
        #[arg(long)]
        email: String,
        #[arg(long, value_parser = parse_plan)]
        plan: Plan,
        /// Dashboard password for the owner (8-128 characters).
        #[arg(long)]
        password: Option<String>,
        /// Print {"account_id","user_id","api_key"} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Change an account's plan.
    SetPlan {
        #[arg(long)]
        account_id: i64,
        #[arg(long, value_parser = parse_plan)]
        plan: Plan,
    },
    /// Suspend an account (its keys answer 403); --undo reactivates it.
    Suspend {
        #[arg(long)]
        account_id: i64,
        #[arg(long)]
        undo: bool,
    },
}

pub async fn run(state: AppState, cmd: AccountsCommand) -> anyhow::Result<()> {
    match cmd {
        AccountsCommand::Create {
            email,
            plan,
            password,
            json,
        } => {
            let created = service::create_account(&state, &email, plan, password.as_deref())
                .await
                .map_err(cli_err)?;
            state.usage.flush().await;
            if json {
                print_json(&created);
            } else {
                println!(
                    "account {} (user {}) created on the {} plan\nAPI key (shown once): {}",
                    created.account_id,
                    created.user_id,
                    plan.as_str(),
                    created.api_key
                );
            }
        }
        AccountsCommand::SetPlan { account_id, plan } => {
            service::set_plan(&state, account_id, plan)
                .await
                .map_err(cli_err)?;
            println!("account {account_id} is now on the {} plan", plan.as_str());
        }
        AccountsCommand::Suspend { account_id, undo } => {
            service::set_suspended(&state, account_id, !undo)
                .await
                .map_err(cli_err)?;
            let word = if undo { "reactivated" } else { "suspended" };
            println!("account {account_id} {word}");
        }
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct ClientRef {
    #[arg(long)]
    account_id: i64,
    #[arg(long)]
    client_id: i64,
}

#[derive(Debug, Subcommand)]
pub enum ResellersCommand {
    /// Create a reseller client under an account and issue its first key.
    Create {
        #[arg(long)]
        account_id: i64,
        #[arg(long)]
        name: String,
        /// Requests per billing month allocated to the client.
        #[arg(long)]
        monthly_quota: i64,
        #[arg(long)]
        json: bool,
    },
    /// List an account's reseller clients.
    List {
        #[arg(long)]
        account_id: i64,
    },
    /// Disable a client: its keys answer 403.
    Disable(ClientRef),
    /// Enable a disabled client.
    Enable(ClientRef),
}

pub async fn run_resellers(state: AppState, cmd: ResellersCommand) -> anyhow::Result<()> {
    match cmd {
        ResellersCommand::Create {
            account_id,
            name,
            monthly_quota,
            json,
        } => {
            let client = reseller::create_client(
                &state,
                account_id,
                NewClient {
                    name: name.clone(),
                    monthly_quota,
                },
            )
            .await
            .map_err(cli_err)?;
            let (_, key) = reseller::create_client_key(&state, account_id, client.id, &name)
                .await
                .map_err(cli_err)?;
            if json {
                print_json(&json!({"client_id": client.id, "api_key": key}));
            } else {
                println!(
                    "reseller client {} created\nAPI key (shown once): {key}",
                    client.id
                );
            }
        }
        ResellersCommand::List { account_id } => {
            for c in reseller::list_clients(&state, account_id)
                .await
                .map_err(cli_err)?
            {
                println!(
                    "{}\t{}\tquota={}\t{}",
                    c.id,
                    c.name,
                    c.monthly_quota,
                    if c.disabled { "disabled" } else { "enabled" }
                );
            }
        }
        ResellersCommand::Disable(r) => set_disabled(&state, r, true).await?,
        ResellersCommand::Enable(r) => set_disabled(&state, r, false).await?,
    }
    Ok(())
}

async fn set_disabled(state: &AppState, r: ClientRef, disabled: bool) -> anyhow::Result<()> {
    reseller::update_client(
        state,
        r.account_id,
        r.client_id,
        ClientUpdate {
            disabled: Some(disabled),
            ..ClientUpdate::default()
        },
    )
    .await
    .map_err(cli_err)?;
    println!(
        "reseller client {} {}",
        r.client_id,
        if disabled { "disabled" } else { "enabled" }
    );
    Ok(())
}
