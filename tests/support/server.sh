# Shared by the scripts that test the real `outreach` binary over HTTP
# (tests/schemathesis/run.sh, tests/openapi/run.sh): source it, after
# `set -euo pipefail` and with ROOT set to the repository.
#
#   server_binary            sets BIN: $OUTREACH_BIN, or the debug build
#   server_workdir           sets WORK (a temp dir, removed on exit unless
#                            KEEP=1) and points the server at it: data dir,
#                            loopback listeners on port 0, SQLite
#   server_account ARGS...   `accounts create ARGS --json`; prints the id
#   server_key ACCOUNT NAME  `keys create`; prints the API key
#   server_start             starts `$BIN serve`; sets SERVER_PID and BASE
#                            once /healthz answers (stdout in $WORK/stdout,
#                            the log in $SERVER_LOG, default $WORK/server.log)
#   server_login EMAIL PASS  prints a dashboard JWT from /auth/login

server_binary() {
    if [ -n "${OUTREACH_BIN:-}" ]; then
        BIN="$OUTREACH_BIN"
    else
        (cd "$ROOT" && cargo build -p outreach --bin outreach)
        BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/outreach"
    fi
}

_server_cleanup() {
    if [ -n "${SERVER_PID:-}" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [ "${KEEP:-0}" = 1 ]; then
        echo "server log and reports kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}

server_workdir() {
    WORK="$(mktemp -d)"
    SERVER_PID=""
    KEEP=0
    trap _server_cleanup EXIT
    export OUTREACH_DATA_DIR="$WORK/data"
    export OUTREACH_LISTEN="127.0.0.1:0"
    export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
    unset OUTREACH_DATABASE_URL || true
}

# Reads one field of the JSON document on stdin.
_json_field() {
    python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

server_account() {
    "$BIN" accounts create "$@" --json | _json_field account_id
}

server_key() {
    "$BIN" keys create --account-id "$1" --name "$2" --json | _json_field api_key
}

server_start() {
    local log="${SERVER_LOG:-$WORK/server.log}"
    "$BIN" serve >"$WORK/stdout" 2>"$log" &
    SERVER_PID=$!
    BASE=""
    for _ in $(seq 1 300); do
        BASE="$(sed -n 's/^listening on \(http:\/\/.*\)$/\1/p' "$WORK/stdout")"
        [ -n "$BASE" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.1
    done
    [ -n "$BASE" ] || { echo "server did not start" >&2; cat "$log" >&2; exit 1; }
    for _ in $(seq 1 100); do
        curl -fsS "$BASE/healthz" >/dev/null 2>&1 && break
        sleep 0.1
    done
}

server_login() {
    curl -fsS -H 'content-type: application/json' \
        -d "$(python3 -c 'import json,sys; print(json.dumps({"email": sys.argv[1], "password": sys.argv[2]}))' "$1" "$2")" \
        "$BASE/auth/login" | _json_field access_token
}
