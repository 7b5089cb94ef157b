//! `outreach templates ...`: ownership of paid templates, granted by an
//! operator, since payments are outside this product.

use std::sync::Arc;

use clap::Subcommand;

use outreach_automation::templates::catalog::TemplateCatalog;
use outreach_automation::templates::store;
use outreach_core::config::Config;
use outreach_core::platform::clock::{SystemClock, iso};
use outreach_core::state::{AppState, Plugins};

#[derive(Debug, Subcommand)]
pub enum TemplatesCommand {
    /// Give an account a template (it then installs it without a 402).
    Grant {
        #[arg(long)]
        account_id: i64,
        #[arg(long)]
        template_id: String,
    },
    /// Take a grant back; workflows installed from it stay.
    Revoke {
        #[arg(long)]
        account_id: i64,
        #[arg(long)]
        template_id: String,
    },
    /// The templates granted to an account.
    List {
        #[arg(long)]
        account_id: i64,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(config: Config, cmd: TemplatesCommand) -> anyhow::Result<()> {
    // The packs are loaded so that a grant names a template that exists.
    let state =
        AppState::build_with(config, Arc::new(SystemClock), Plugins::Load, &crate::AREAS).await?;
    let account = |id: i64| {
        let state = state.clone();
        async move {
            outreach_core::accounts::store::get_account(&state.db, id)
                .await?
                .map(|_| id)
                .ok_or_else(|| anyhow::anyhow!("no account {id}"))
        }
    };
    match cmd {
        TemplatesCommand::Grant {
            account_id,
            template_id,
        } => {
            account(account_id).await?;
            let t = state
                .ext::<TemplateCatalog>()
                .find(&state, &template_id)
                .await
                .ok_or_else(|| {
                    anyhow::anyhow!("no template '{template_id}' in the loaded packs")
                })?;
            let fresh = store::grant(&state.db, account_id, &t.id, state.clock.now_ms()).await?;
            let word = if fresh { "granted" } else { "already granted" };
            println!("template {} {word} to account {account_id}", t.id);
        }
        TemplatesCommand::Revoke {
            account_id,
            template_id,
        } => {
            account(account_id).await?;
            if !store::revoke(&state.db, account_id, &template_id).await? {
                anyhow::bail!("account {account_id} has no grant of '{template_id}'");
            }
            println!("template {template_id} revoked from account {account_id}");
        }
        TemplatesCommand::List { account_id, json } => {
            account(account_id).await?;
            let grants = store::grants(&state.db, account_id).await?;
            if json {
                let rows: Vec<serde_json::Value> = grants
                    .iter()
                    .map(|(id, at)| serde_json::json!({"template_id": id, "granted_at": iso(*at)}))
                    .collect();
                super::print_json(&rows);
            } else {
                for (id, at) in &grants {
                    println!("{id}\t{}", iso(*at));
                }
            }
        }
    }
    Ok(())
}
