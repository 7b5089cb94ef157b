//! `outreach domains import FILE`: domains into the pool (see
//! `outreach_leads::domains::import` for the rules), with a progress bar
//! on a terminal and a `--json` summary for scripts; `outreach domains
//! rebuild-rollups`: the market-intelligence rollups recomputed.

use std::io::{BufReader, IsTerminal, Write};
use std::path::PathBuf;

use clap::Subcommand;

use super::print_json;
use outreach_core::state::AppState;
use outreach_leads::domains::import::{self, Format};

#[derive(Debug, Subcommand)]
pub enum DomainsCommand {
    /// Add domains to the pool from a CSV/TSV file (a domain, domains,
    /// website, url or site column, else the first) or JSON lines with
    /// record fields (`.jsonl`, `.ndjson`, or lines starting with `{`).
    Import {
        file: PathBuf,
        /// Queue the new domains for enrichment.
        #[arg(long)]
        enrich: bool,
        /// Print {"imported","updated","skipped","invalid"} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Recompute the market-intelligence rollups from the pool's records.
    /// Every save keeps them up to date; run this after editing the
    /// database by hand.
    RebuildRollups,
}

pub async fn run(state: AppState, command: DomainsCommand) -> anyhow::Result<()> {
    let (file, enrich, json) = match command {
        DomainsCommand::Import { file, enrich, json } => (file, enrich, json),
        DomainsCommand::RebuildRollups => {
            let counted = outreach_leads::domains::rollups::rebuild(&state.db).await?;
            println!("rollups rebuilt over {counted} records");
            return Ok(());
        }
    };
    let handle = std::fs::File::open(&file)
        .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", file.display()))?;
    let total = handle.metadata().map(|m| m.len()).unwrap_or(0);
    let mut input = BufReader::with_capacity(256 * 1024, handle);
    let format = format_of(&file, &mut input)?;
    let bar = std::io::stderr().is_terminal() && !json;
    let summary = import::import(&state, input, format, enrich, |read| {
        if bar {
            draw(read, total);
        }
    })
    .await?;
    if bar {
        eprintln!();
    }
    if json {
        print_json(&summary);
    } else {
        println!(
            "imported {}, updated {}, skipped {}, invalid {}",
            summary.imported, summary.updated, summary.skipped, summary.invalid
        );
    }
    Ok(())
}

/// JSON lines by extension, or by a first character `{`; CSV otherwise.
fn format_of(file: &std::path::Path, input: &mut impl std::io::BufRead) -> anyhow::Result<Format> {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ["jsonl", "ndjson"].contains(&ext.to_ascii_lowercase().as_str()) {
        return Ok(Format::JsonLines);
    }
    let head = input.fill_buf()?;
    let first = head
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF);
    Ok(if first == Some(b'{') {
        Format::JsonLines
    } else {
        Format::Csv
    })
}

/// `[#####-----]  52%  12.3 of 23.6 MB` on one line of stderr.
fn draw(read: u64, total: u64) {
    let pct = (read * 100).checked_div(total).unwrap_or(100).min(100);
    let filled = (pct / 5) as usize;
    let mb = |b: u64| b as f64 / 1_000_000.0;
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "\r[{}{}] {pct:>3}%  {:.1} of {:.1} MB",
        "#".repeat(filled),
        "-".repeat(20 - filled),
        mb(read),
        mb(total)
    );
    let _ = err.flush();
}
