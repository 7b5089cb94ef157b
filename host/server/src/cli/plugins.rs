//! `outreach plugins ...`: what is loaded, and checks for component files.

use std::path::PathBuf;

use clap::Subcommand;

use outreach_core::config::Config;

#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// Loaded plugins with their call counters. Asks the running server
    /// (on its metrics listener) for live counters; without a running server
    /// it loads the plugins itself and the counters are zero.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Describe one component file: hash, imports, exports, manifest, validity.
    Inspect { file: PathBuf },
    /// Validate every `name.wasm` + `name.toml` pair of a folder.
    Validate { dir: PathBuf },
}

pub async fn run(config: Config, cmd: PluginsCommand) -> anyhow::Result<()> {
    match cmd {
        PluginsCommand::List { json } => {
            let (plugins, live) = match live_list(&config).await {
                Some(p) => (p, true),
                None => {
                    let rt = outreach_core::state::start_plugins(&config, None).await?;
                    let list = rt.list();
                    (serde_json::to_value(list)?, false)
                }
            };
            if json {
                println!("{plugins}");
                return Ok(());
            }
            println!(
                "{:<28} {:<17} {:<8} {:<11} {:>7} {:>7} {:>6} {:>8} {:>10}",
                "ID",
                "KIND",
                "VERSION",
                "SOURCE",
                "CALLS",
                "ERRORS",
                "TRAPS",
                "TIMEOUTS",
                "P50(us)"
            );
            for p in plugins.as_array().into_iter().flatten() {
                let s = &p["stats"];
                let errors: u64 = s["errors"]
                    .as_object()
                    .map(|m| m.values().filter_map(|v| v.as_u64()).sum())
                    .unwrap_or(0);
                println!(
                    "{:<28} {:<17} {:<8} {:<11} {:>7} {:>7} {:>6} {:>8} {:>10}",
                    p["id"].as_str().unwrap_or(""),
                    p["kind"].as_str().unwrap_or(""),
                    p["version"].as_str().unwrap_or(""),
                    p["source"]["type"].as_str().unwrap_or(""),
                    s["calls"].as_u64().unwrap_or(0),
                    errors,
                    s["traps"].as_u64().unwrap_or(0),
                    s["timeouts"].as_u64().unwrap_or(0),
                    s["latency_p50_us"].as_u64().unwrap_or(0),
                );
            }
            if !live {
                eprintln!(
                    "(no running server answered on {}; counters are this process's)",
                    config.metrics_listen
                );
            }
        }
        PluginsCommand::Inspect { file } => {
            let rt = outreach_core::state::start_plugins(&config, None).await?;
            let report = rt
                .inspect(&file)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
        PluginsCommand::Validate { dir } => {
            let rt = outreach_core::state::start_plugins(&config, None).await?;
            let reports = rt.validate_dir(&dir).await;
            let mut bad = 0;
            for r in &reports {
                match &r.result {
                    Ok(id) => println!("ok       {}  ({id})", r.file.display()),
                    Err(why) => {
                        bad += 1;
                        println!("REFUSED  {}: {why}", r.file.display());
                    }
                }
            }
            if reports.is_empty() {
                println!("no name.wasm + name.toml pairs in {}", dir.display());
            }
            anyhow::ensure!(bad == 0, "{bad} of {} plugins refused", reports.len());
        }
    }
    Ok(())
}

/// The running server's plugin list, from its metrics listener.
async fn live_list(config: &Config) -> Option<serde_json::Value> {
    let url = format!("http://{}/plugins", config.metrics_listen);
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(2))
        .no_proxy()
        .build()
        .ok()?;
    client.get(url).send().await.ok()?.json().await.ok()
}
