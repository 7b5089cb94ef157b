#!/usr/bin/env bash
# Incremental build times after touching one file, with the shared target
# dir warm (ARCHITECTURE.md "Build times"). Works on the one-crate layout
# (host/server held every area) and the split layout, so both can be
# measured on the same machine:
#
#   tests/bench/build_times.sh            prints one line per measurement
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/outreach-target}"
export CARGO_TERM_COLOR=never
if [ -d host/core ]; then
    vendor_file=host/vendors/src/vendor_keys/service.rs
    accounts_file=host/core/src/accounts/service.rs
    vendor_crate=outreach-vendors
    accounts_crate=outreach-core
else
    vendor_file=host/server/src/vendor_keys/service.rs
    accounts_file=host/server/src/accounts/service.rs
    vendor_crate=outreach
    accounts_crate=outreach
fi

runs=${RUNS:-3}

# touch FILE, then time the command; the median of $runs runs, in seconds.
timed() {
    local file=$1 start end
    shift
    for _ in $(seq "$runs"); do
        touch "$file"
        start=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        end=$(date +%s.%N)
        awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f\n", e - s }'
    done | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }'
}

# Warm everything each measurement starts from.
cargo build --workspace >/dev/null 2>&1
cargo build --workspace --all-targets >/dev/null 2>&1
cargo clippy --workspace --all-targets >/dev/null 2>&1

echo "(a) cargo build after touching $vendor_file: $(timed "$vendor_file" cargo build --workspace) s"
echo "(b) cargo build after touching $accounts_file: $(timed "$accounts_file" cargo build --workspace) s"
echo "(c) cargo clippy --workspace --all-targets after touching $vendor_file: $(timed "$vendor_file" cargo clippy --workspace --all-targets) s"
echo "(c') the same after touching $accounts_file: $(timed "$accounts_file" cargo clippy --workspace --all-targets) s"
echo "(d) cargo test -p $vendor_crate --no-run after touching $vendor_file: $(timed "$vendor_file" cargo test -p "$vendor_crate" --no-run) s"
echo "(d') cargo test -p $accounts_crate --no-run after touching $accounts_file: $(timed "$accounts_file" cargo test -p "$accounts_crate" --no-run) s"
