//! `outreach keys ...`: operator-side API key management.

use clap::Subcommand;
use serde_json::json;

use super::{cli_err, print_json};
use outreach_core::api_keys::NewKey;
use outreach_core::state::AppState;

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a named key for an account; the key is printed once.
    Create {
        #[arg(long)]
        account_id: i64,
        #[arg(long)]
        name: String,
        /// Allowed IP or CIDR (repeatable); none allows all.
        #[arg(long = "allow-ip")]
        allow_ips: Vec<String>,
        /// Allowed endpoint group (repeatable); none allows all.
        #[arg(long = "allow-group")]
        allow_groups: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// List an account's keys (never the keys themselves).
    List {
        #[arg(long)]
        account_id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Revoke one key.
    Revoke {
        #[arg(long)]
        account_id: i64,
        #[arg(long)]
        key_id: i64,
    },
}

pub async fn run(state: AppState, cmd: KeysCommand) -> anyhow::Result<()> {
    match cmd {
        KeysCommand::Create {
            account_id,
            name,
            allow_ips,
            allow_groups,
            json,
        } => {
            let (info, key) = state
                .keys
                .create(
                    account_id,
                    None,
                    None,
                    NewKey {
                        name,
                        allowed_ips: allow_ips,
                        allowed_endpoint_groups: allow_groups,
                    },
                )
                .await
                .map_err(cli_err)?;
            if json {
                print_json(&json!({"key_id": info.id, "api_key": key}));
            } else {
                println!("key {} created\nAPI key (shown once): {key}", info.id);
            }
        }
        KeysCommand::List { account_id, json } => {
            let keys = state.keys.list(account_id).await.map_err(cli_err)?;
            if json {
                print_json(&keys);
            } else {
                for k in keys {
                    println!(
                        "{}\t{}\t{}\trequests={}\t{}",
                        k.id,
                        k.name,
                        k.key_preview,
                        k.request_count,
                        if k.revoked_at.is_some() {
                            "revoked"
                        } else {
                            "active"
                        }
                    );
                }
            }
        }
        KeysCommand::Revoke { account_id, key_id } => {
            state
                .keys
                .revoke(account_id, key_id)
                .await
                .map_err(cli_err)?;
            println!("key {key_id} revoked");
        }
    }
    Ok(())
}
