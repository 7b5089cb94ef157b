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

# shellcheck source=../support/server.sh
. "$ROOT/tests/support/server.sh"
server_binary
server_workdir
REPORT_DIR="${ST_REPORT_DIR:-$WORK/report}"

PASSWORD="schemathesis password"
# API keys: one Enterprise account with several keys (see hooks.py).
ACCOUNT_ID="$(server_account --email api@example.com --plan enterprise)"
KEYS=""
for i in $(seq 1 "$API_KEYS"); do
    KEYS="${KEYS:+$KEYS,}$(server_key "$ACCOUNT_ID" "st-$i")"
done
# The dashboard account whose JWT the /auth/* routes get.
server_account --email dashboard@example.com --plan enterprise --password "$PASSWORD" >/dev/null

server_start
JWT="$(server_login dashboard@example.com "$PASSWORD")"

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
