#!/usr/bin/env bash
# Scoring benchmark: 200 batch scorings of 100 domains by the default rule
# on embedded SQLite, against the plain read of the same records (see
# host/leads/examples/scoring_bench.rs). Prints p50 and p95. Release build
# of the example. Environment: CARGO_TARGET_DIR (default
# $HOME/.cache/outreach-release).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/outreach-release}"
cd "$ROOT"
cargo run --quiet --release -p outreach-leads --example scoring_bench
