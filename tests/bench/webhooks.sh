#!/usr/bin/env bash
# Webhook delivery benchmark: signed deliveries per second end to end, from
# the event outbox to a receiver, on embedded SQLite, against the receiver's
# own capacity measured alone in the same run (the reference).
#
#   1. The reference: wrk POSTs a delivery-sized body to the sink
#      (tests/src/bin/webhook_sink.rs, answers 200 at once) for BENCH_DURATION.
#   2. The real thing: the release `outreach serve` with one subscription to
#      the sink; BENCH_EVENTS events are committed to the outbox in one
#      transaction, as an area would; the clock runs from that commit until
#      the sink has counted every delivery. Each one went through fan-out,
#      a lease, HMAC-SHA256 signing twice, an HTTP POST and the outcome
#      written back (attempt row and delivery state).
#
# Target: at least 5,000 deliveries/s (BENCH_ENFORCE=0 only reports).
# Environment: BENCH_EVENTS (50000), BENCH_DURATION (10s), BENCH_CONNECTIONS
# (64), OUTREACH_BIN (skip the release build), CARGO_TARGET_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
EVENTS="${BENCH_EVENTS:-50000}"
DURATION="${BENCH_DURATION:-10s}"
CONNECTIONS="${BENCH_CONNECTIONS:-64}"
ENFORCE="${BENCH_ENFORCE:-1}"
TARGET=5000

WORK="$(mktemp -d)"
# shellcheck source=common.sh
. "$ROOT/tests/bench/common.sh"
bench_wrk
BIN="$(bench_binary)"
(cd "$ROOT" && cargo build --release -p outreach-e2e --bin webhook_sink >&2)
SINK_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/webhook_sink"

SERVER_PID=""
SINK_PID=""
cleanup() {
    bench_stop "$SERVER_PID" "$SINK_PID"
    rm -rf "$WORK"
}
trap cleanup EXIT

"$SINK_BIN" >"$WORK/sink.out" &
SINK_PID=$!
for _ in $(seq 1 100); do
    SINK_PORT="$(sed -n 's/^listening on //p' "$WORK/sink.out")"
    [ -n "$SINK_PORT" ] && break
    sleep 0.05
done
SINK="http://127.0.0.1:$SINK_PORT"

# A body of the size deliveries have, with their headers.
BODY='{"event":"list.item_added","timestamp":"2026-11-23T12:00:00Z","webhook_id":1,"data":{"list_id":1,"domain":"d12345.example","i":12345}}'
cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Service-Signature"] = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
wrk.headers["webhook-signature"] = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
LUA
echo "reference: the sink alone, wrk -c$CONNECTIONS -d$DURATION" >&2
REF="$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "$WORK/post.lua" "$SINK/hook" | sed -n 's/^Requests\/sec: *//p')"

export OUTREACH_DATA_DIR="$WORK/data"
export OUTREACH_LISTEN="127.0.0.1:0"
export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
export OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK=true
export OUTREACH_LOG=warn
unset OUTREACH_DATABASE_URL OUTREACH_CONFIG || true
ACCOUNT="$("$BIN" accounts create --email bench@example.com --plan enterprise --json)"
ACCOUNT_ID="$(echo "$ACCOUNT" | jq -r .account_id)"
KEY="$(echo "$ACCOUNT" | jq -r .api_key)"
bench_start_server
curl -fsS -X POST "$BASE/v1/webhooks" -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
    -d "{\"url\": \"$SINK/hook\", \"events\": [\"*\"]}" >/dev/null
BEFORE="$(curl -fsS "$SINK/count")"

echo "end to end: $EVENTS events through the outbox" >&2
START="$(python3 - "$OUTREACH_DATA_DIR/outreach.db" "$ACCOUNT_ID" "$EVENTS" <<'PY'
import json, sqlite3, sys, time
db, account, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conn = sqlite3.connect(db, timeout=30)
rows = [(account, "list.item_added",
         json.dumps({"list_id": 1, "domain": f"d{i}.example", "i": i}), 1_795_000_000_000)
        for i in range(n)]
conn.executemany("INSERT INTO event_outbox (account_id, event_type, data, created_at) VALUES (?, ?, ?, ?)", rows)
conn.commit()
print(time.time())
PY
)"
while :; do
    GOT=$(( $(curl -fsS "$SINK/count") - BEFORE ))
    [ "$GOT" -ge "$EVENTS" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/stderr" >&2; exit 1; }
    sleep 0.02
done
END="$(python3 -c 'import time; print(time.time())')"
RSS_KB="$(awk '/VmHWM/ {print $2}' "/proc/$SERVER_PID/status")"
FAILED="$(curl -fsS "$BASE/v1/webhooks/deliveries?limit=1" -H "authorization: Bearer $KEY" | jq .summary.total_failed)"

python3 - "$REF" "$EVENTS" "$START" "$END" "$RSS_KB" "$FAILED" "$TARGET" "$ENFORCE" <<'PY'
import sys
ref, n, start, end, rss, failed, target, enforce = sys.argv[1:]
ref, n, secs = float(ref), int(n), float(end) - float(start)
rate = n / secs
print(f"reference (sink alone):      {ref:,.0f} requests/s")
print(f"end to end (outbox to sink): {rate:,.0f} deliveries/s ({n:,} in {secs:.2f} s)")
print(f"ratio:                       {rate / ref:.2f}")
print(f"server peak RSS:             {int(rss) / 1024:.0f} MB; failed deliveries: {failed}")
if enforce == "1" and (rate < float(target) or failed != "0"):
    sys.exit(f"target missed: {rate:,.0f}/s < {int(target):,}/s or failures")
PY
