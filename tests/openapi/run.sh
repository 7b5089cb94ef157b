#!/usr/bin/env bash
# The OpenAPI document the real `outreach` binary serves, fed to the tools
# users feed it to: a validator of the specification (openapi-spec-validator)
# and a client generator (openapi-python-client), whose generated client is
# then installed and calls a running server (test_client.py).
#
# Installs both from PyPI at pinned versions into $OPENAPI_VENV (default
# $HOME/.cache/outreach-openapi-venv, kept apart from schemathesis's venv so
# their dependency pins cannot fight), builds the debug binary (or takes
# OUTREACH_BIN) and starts it like tests/schemathesis/run.sh does
# (tests/support/server.sh). Fails on an invalid document, on any generator
# error or warning (a warning is an operation, response or schema the
# generated client leaves out), and on a failing client call.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="${OPENAPI_VENV:-$HOME/.cache/outreach-openapi-venv}"
# The tools, and what the generated client imports at run time.
REQUIREMENTS=(
    "openapi-spec-validator==0.9.0"
    "openapi-python-client==0.29.1"
    "httpx==0.28.1"
    "attrs==26.1.0"
    "python-dateutil==2.9.0.post0"
    "wheel==0.45.1"
)

STAMP="$VENV/.outreach-requirements"
if [ "$(cat "$STAMP" 2>/dev/null)" != "${REQUIREMENTS[*]}" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "${REQUIREMENTS[@]}"
    echo "${REQUIREMENTS[*]}" >"$STAMP"
fi

# shellcheck source=../support/server.sh
. "$ROOT/tests/support/server.sh"
server_binary
server_workdir

# A known master key, so the client test can sign an open-pixel token.
OUTREACH_ENCRYPTION_KEY="$(python3 -c 'import base64,os; print(base64.b64encode(os.urandom(32)).decode())')"
export OUTREACH_ENCRYPTION_KEY
ACCOUNT_ID="$(server_account --email openapi@example.com --plan enterprise)"
API_KEY="$(server_key "$ACCOUNT_ID" openapi-client)"
server_start

KEEP=1 # until everything passed
curl -fsS "$BASE/openapi.json" -o "$WORK/openapi.json"

echo "--- openapi-spec-validator"
"$VENV/bin/openapi-spec-validator" "$WORK/openapi.json"

echo "--- openapi-python-client generate"
set +e
(cd "$WORK" && PATH="$VENV/bin:$PATH" "$VENV/bin/openapi-python-client" generate --path openapi.json \
    --config "$HERE/generator.yaml" --meta setup --fail-on-warning \
    --output-path "$WORK/outreach-client") >"$WORK/generate.log" 2>&1
STATUS=$?
set -e
if [ "$STATUS" -ne 0 ]; then
    cat "$WORK/generate.log" >&2
    echo "--- the generator reported errors or warnings (above)" >&2
    exit 1
fi
# Installed into the run's folder, not the venv: nothing of one run's client
# is left for the next.
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    --target "$WORK/site" "$WORK/outreach-client"

echo "--- the generated client against the server"
PYTHONPATH="$WORK/site" OUTREACH_BASE="$BASE" OUTREACH_API_KEY="$API_KEY" \
    "$VENV/bin/python" "$HERE/test_client.py"

if grep -q 'panicked' "$WORK/server.log"; then
    echo "--- the server panicked during the run" >&2
    grep -A5 'panicked' "$WORK/server.log" | head -n 40 >&2
    exit 1
fi
KEEP=0
