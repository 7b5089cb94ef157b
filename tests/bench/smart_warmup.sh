#!/usr/bin/env bash
# Smart warmup benchmark: 1,000 pool members at 40 messages a day through
# one simulated day on embedded SQLite, sending to Postfix's smtp-sink,
# against bare SMTP to the same sink in the same run (the reference).
# Prints messages per second, the ratio, the exchange pass's time per tick
# and peak RSS.
#
# Release build of the `smart_warmup_bench` example of outreach-outbound.
# Environment: CARGO_TARGET_DIR (default $HOME/.cache/outreach-release),
# WARMUP_BENCH_MEMBERS (default 1000).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/outreach-release}"
cd "$ROOT"
tests/support/mail.sh >/dev/null
cargo run --quiet --release -p outreach-outbound --example smart_warmup_bench
