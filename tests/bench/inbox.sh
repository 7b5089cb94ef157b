#!/usr/bin/env bash
# Inbox benchmark: parse, match, thread, store and classify 10,000 replies
# (70 % human replies in seven languages, 20 % DSNs, 10 % out-of-office) on
# embedded SQLite, against the MIME parse alone (mail-parser) of the same
# messages in the same run (the reference). Prints messages per second of
# each stage and the ratio of the whole pipeline to the reference.
#
# Release build of the `inbox_bench` example of outreach-outbound (about as
# long as the server's release build the first time). Environment:
# CARGO_TARGET_DIR (default $HOME/.cache/outreach-release).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/outreach-release}"
cd "$ROOT"
cargo run --quiet --release -p outreach-outbound --example inbox_bench
