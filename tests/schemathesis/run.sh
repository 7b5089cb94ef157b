#!/usr/bin/env bash
# Property-based API testing of the real `outreach` binary with schemathesis,
# against the OpenAPI document it serves at /openapi.json.
#
# Installs schemathesis from PyPI into $HOME/.cache/outreach-venv (once),
# builds the debug binary (or takes OUTREACH_BIN), starts it on loopback with a
# temporary data directory, makes the accounts and keys the hooks need
# (hooks.py) and runs schemathesis with a bounded number of examples.
#
# Environment: ST_MAX_EXAMPLES (25 per operation), ST_SEED (fixed, so a run
# is reproducible; set ST_SEED=random for a new one), ST_CHECKS, ST_WORKERS,
# OUTREACH_BIN, CARGO_TARGET_DIR. Reports go to $ST_REPORT_DIR (default: a
# temporary folder that is kept and printed on failure).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HOME/.cache/outreach-venv"
ST_VERSION="${ST_VERSION:-4.32.5}"
MAX_EXAMPLES="${ST_MAX_EXAMPLES:-25}"
SEED="${ST_SEED:-20261121}"
WORKERS="${ST_WORKERS:-2}"
CHECKS="${ST_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance}"
API_KEYS=8

if ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -q "$ST_VERSION"; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$ST_VERSION"
fi

if [ -n "${OUTREACH_BIN:-}" ]; then
    BIN="$OUTREACH_BIN"
else
    (cd "$ROOT" && cargo build -p outreach --bin outreach)
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/outreach"
fi

WORK="$(mktemp -d)"
REPORT_DIR="${ST_REPORT_DIR:-$WORK/report}"
SERVER_PID=""
KEEP=0
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [ "$KEEP" = 1 ]; then
        echo "server log and reports kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

export OUTREACH_DATA_DIR="$WORK/data"
export OUTREACH_LISTEN="127.0.0.1:0"
export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
unset OUTREACH_DATABASE_URL || true

PASSWORD="schemathesis password"
# API keys: one Enterprise account with several keys (see hooks.py).
ACCOUNT_ID="$("$BIN" accounts create --email api@example.com --plan enterprise --json \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["account_id"])')"
KEYS=""
for i in $(seq 1 "$API_KEYS"); do
    KEY="$("$BIN" keys create --account-id "$ACCOUNT_ID" --name "st-$i" --json \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')"
    KEYS="${KEYS:+$KEYS,}$KEY"
done
# The dashboard account whose JWT the /auth/* routes get.
"$BIN" accounts create --email dashboard@example.com --plan enterprise \
    --password "$PASSWORD" --json >/dev/null

"$BIN" serve >"$WORK/stdout" 2>"$WORK/server.log" &
SERVER_PID=$!
BASE=""
for _ in $(seq 1 300); do
    BASE="$(sed -n 's/^listening on \(http:\/\/.*\)$/\1/p' "$WORK/stdout")"
    [ -n "$BASE" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$BASE" ] || { echo "server did not start" >&2; exit 1; }
for _ in $(seq 1 100); do
    curl -fsS "$BASE/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done

JWT="$(curl -fsS -H 'content-type: application/json' \
    -d "{\"email\":\"dashboard@example.com\",\"password\":\"$PASSWORD\"}" \
    "$BASE/auth/login" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"

SEED_ARGS=()
[ "$SEED" = random ] || SEED_ARGS=(--seed "$SEED")

set +e
OUTREACH_ST_KEYS="$KEYS" OUTREACH_ST_JWT="$JWT" \
SCHEMATHESIS_HOOKS=hooks PYTHONPATH="$HERE" \
    "$VENV/bin/schemathesis" run "$BASE/openapi.json" \
    --checks "$CHECKS" \
    --max-examples "$MAX_EXAMPLES" \
    "${SEED_ARGS[@]}" \
    --workers "$WORKERS" \
    --request-timeout 10 \
    --max-response-time 5 \
    --report junit --report-dir "$REPORT_DIR" \
    --no-color
STATUS=$?
set -e

# A 5xx must show up in the server log as an error; list them for the report.
if grep -E '"?(level)?"?.*(ERROR|panicked)' "$WORK/server.log" >/dev/null; then
    echo "--- server errors logged during the run:" >&2
    grep -E 'ERROR|panicked' "$WORK/server.log" | head -n 40 >&2
fi
# A panic is a bug even when every answer was right (a background worker's
# panic leaves the API answering while the work stops).
if grep -q 'panicked' "$WORK/server.log"; then
    echo "--- the server panicked during the run (see above)" >&2
    STATUS=1
fi
if [ "$STATUS" -ne 0 ]; then
    KEEP=1
fi
exit "$STATUS"
