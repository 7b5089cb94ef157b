#!/usr/bin/env bash
# The public approval page in headless Chromium (Debian's chromium package,
# driven by playwright-core from npm) against the real `outreach` binary:
# a webhook starts a run that waits for approval, the browser opens the
# link the run recorded, presses Approve, and the new run is checked over
# the API (approval.mjs).
#
# Installs chromium and the npm package when missing; builds the debug
# binary unless OUTREACH_BIN names one.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

if [ ! -x /usr/bin/chromium ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
[ -d "$HERE/node_modules/playwright-core" ] \
    || (cd "$HERE" && npm ci --no-audit --no-fund --silent)

# shellcheck source=../support/server.sh
. "$ROOT/tests/support/server.sh"
server_binary
server_workdir
# The link must name the address the browser reaches, so the port is
# chosen before the server starts.
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export OUTREACH_LISTEN="127.0.0.1:$PORT"
export OUTREACH_PUBLIC_BASE_URL="http://127.0.0.1:$PORT"

ACCOUNT_ID="$(server_account --email browser@example.com --plan starter)"
KEY="$(server_key "$ACCOUNT_ID" browser)"
server_start

call() { # METHOD PATH [JSON]
    curl -fsS -X "$1" -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
        ${3:+-d "$3"} "$BASE$2"
}
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d" + sys.argv[1]))' "$1"; }

WORKFLOW="$(call POST /v1/workflows '{"name": "Browser approval", "trigger_type": "webhook",
  "actions": [
    {"type": "wait_for_approval", "config": {"email": "boss@example.com", "message": "Ship <b>these</b>?"}},
    {"type": "conditional_branch", "config": {"branches": [
      {"when": {"field": "trigger.approval_decision", "op": "equals", "value": "approved"},
       "then": [{"type": "cross_run_memory", "config": {"op": "store", "key": "approved", "value": "{{domains}}"}}]}]}}
  ]}')"
WORKFLOW_ID="$(echo "$WORKFLOW" | field '["id"]')"
TOKEN="$(echo "$WORKFLOW" | field '["webhook_token"]')"
RUN_ID="$(curl -fsS -H 'content-type: application/json' -d '{"domains": ["alpha.example", "beta.example"]}' \
    "$BASE/v1/workflows/incoming/$TOKEN" | field '["run_id"]')"

URL=""
for _ in $(seq 1 100); do
    RUN="$(call GET "/v1/workflows/$WORKFLOW_ID/runs/$RUN_ID")"
    if [ "$(echo "$RUN" | field '.get("finished_at")')" != None ]; then
        URL="$(echo "$RUN" | field '["actions_executed"][0]["result"]["approval_url"]')"
        break
    fi
    sleep 0.2
done
[ -n "$URL" ] || { echo "the run did not reach the wait: $RUN" >&2; cat "$WORK/server.log" >&2; exit 1; }

node "$HERE/approval.mjs" "$BASE" "$KEY" "$WORKFLOW_ID" "$URL" \
    || { KEEP=1; cat "$WORK/server.log" >&2; exit 1; }
