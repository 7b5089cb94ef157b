#!/usr/bin/env bash
# Crawl benchmark: 2,000 local company sites enriched end to end through the
# real pipeline (see host/leads/examples/crawl_bench.rs). Prints domains per
# second and peak RSS. Release build of the example (about as long as the
# server's release build the first time). Environment: CARGO_TARGET_DIR
# (default $HOME/.cache/outreach-release), CRAWL_SITES (default 2000).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/outreach-release}"
cd "$ROOT"
cargo run --quiet --release -p outreach-leads --example crawl_bench
