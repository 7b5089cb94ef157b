#!/usr/bin/env bash
# List import benchmark: a 5 MB CSV of about 150,000 rows into a list capped
# at 200,000 items, against plain item inserts in the same run (see
# host/leads/examples/list_import_bench.rs). Prints rows per second, the
# ratio and peak RSS. Release build of the example. Environment:
# CARGO_TARGET_DIR (default $HOME/.cache/outreach-release), IMPORT_ROWS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/outreach-release}"
cd "$ROOT"
cargo run --quiet --release -p outreach-leads --example list_import_bench
