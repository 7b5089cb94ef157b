#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs and starts what the tests need,
# then runs every crate's tests on SQLite and the database-backed suites again
# on PostgreSQL, then schemathesis against the served OpenAPI document, the
# approval page in headless Chromium, then a validator and a generated client
# over that document.
#
#   tests/run.sh            everything
#   tests/run.sh --quick    SQLite only, no schemathesis, no OpenAPI tools
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/outreach-target}"
quick=false
[ "${1:-}" = "--quick" ] && quick=true

step() { printf '\n==> %s\n' "$*"; }

step "Rust toolchain and the wasm32-wasip2 target"
tests/support/toolchain.sh

step "PostgreSQL"
tests/support/postgres.sh

step "Mail peers (Postfix's smtp-sink, a private Dovecot)"
if ! command -v smtp-sink >/dev/null 2>&1 || ! command -v dovecot >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postfix dovecot-imapd >/dev/null
fi
# The outbound crate's mail tests expect these on fixed loopback ports.
tests/support/mail.sh

step "PDF checkers (qpdf, poppler-utils) for the industry report"
if ! command -v qpdf >/dev/null 2>&1 || ! command -v pdftoppm >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qpdf poppler-utils >/dev/null
fi

step "Plugin toolchains (componentize-py, componentize-js)"
tests/plugins/setup.sh

step "Webhook receiver libraries (@octokit/webhooks-methods, standardwebhooks)"
if [ ! -d tests/webhooks/node_modules/standardwebhooks ] \
    || [ ! -d tests/webhooks/node_modules/@octokit/webhooks-methods ]; then
    (cd tests/webhooks && npm ci --no-audit --no-fund --silent)
fi

step "Build"
cargo build --workspace --all-targets
# The tests and scripts run this binary instead of building their own with
# `cargo build -p outreach`, whose narrower feature set rebuilt the core
# crates in place while the workspace's tests were still using them.
export OUTREACH_BIN="$CARGO_TARGET_DIR/debug/outreach"

step "Tests on SQLite"
OUTREACH_TEST_BACKEND=sqlite cargo test --workspace

step "Plugin crates' native unit tests (guest workspace, built for the host)"
cargo test --manifest-path plugins/Cargo.toml --workspace --exclude hostile --exclude hostile-action --exclude trivial \
    --target-dir "$CARGO_TARGET_DIR/guest-native"

if ! $quick; then
    step "Tests on PostgreSQL"
    # Every crate that touches the database: the core, the area crates, the
    # server assembly and the end-to-end tests.
    OUTREACH_TEST_BACKEND=postgres cargo test -p outreach-core -p outreach-vendors \
        -p outreach-outbound -p outreach-leads -p outreach-automation -p outreach -p outreach-e2e

    if [ -x tests/schemathesis/run.sh ]; then
        step "schemathesis against /openapi.json"
        tests/schemathesis/run.sh
    fi

    step "The approval page in headless Chromium"
    tests/browser/run.sh

    step "openapi-spec-validator and a generated Python client against /openapi.json"
    tests/openapi/run.sh
fi
step "All tests passed"
