#!/usr/bin/env bash
# Workflow run benchmark (P4): runs per second started by the incoming
# webhook and finished by the run worker, on embedded SQLite, against
# `GET /healthz` under the same wrk load in the same run (the reference).
#
#   1. The reference: wrk (BENCH_CONNECTIONS connections) on GET /healthz.
#   2. The real thing: the same wrk load POSTs a body of 10 domains to a
#      webhook-triggered workflow's incoming URL (the per-token limit raised
#      by `workflow_webhook_calls_per_minute`). Each accepted call is a run
#      persisted before the 202; the worker runs it through two WASM
#      component actions (`filter_domains`, `data_transform`, sandboxed in
#      wasmtime), checkpointing after each with its action record and
#      stream event, and finishes it. The clock runs from the first run's
#      acceptance to the last run's finish, read from the database.
#
# Prints accepted calls/s and their p99, finished runs/s, the time from
# accept to finish (p50, p99), and the ratio to /healthz. Target: at least
# 2,200 finished runs/s (n8n publishes 220/s for a webhook workflow on 2
# vCPU); BENCH_ENFORCE=0 only reports.
# Environment: BENCH_DURATION (10s), BENCH_CONNECTIONS (32), OUTREACH_BIN
# (skip the release build), CARGO_TARGET_DIR, BENCH_PERF (a file: records
# the server's CPU profile with `perf record -g` during the measured load),
# BENCH_PERF_HZ (999), BENCH_PERF_CALLGRAPH (-g; the release binary has no
# frame pointers, so name callers with '--call-graph dwarf,32768').
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DURATION="${BENCH_DURATION:-10s}"
CONNECTIONS="${BENCH_CONNECTIONS:-32}"
ENFORCE="${BENCH_ENFORCE:-1}"
TARGET=2200

WORK="$(mktemp -d)"
# shellcheck source=common.sh
. "$ROOT/tests/bench/common.sh"
bench_wrk
BIN="$(bench_binary)"

SERVER_PID=""
cleanup() {
    bench_stop "$SERVER_PID"
    rm -rf "$WORK"
}
trap cleanup EXIT

export OUTREACH_DATA_DIR="$WORK/data"
export OUTREACH_LISTEN="127.0.0.1:0"
export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
export OUTREACH_WORKFLOW_WEBHOOK_CALLS_PER_MINUTE=100000000
export OUTREACH_LOG=warn
unset OUTREACH_DATABASE_URL OUTREACH_CONFIG || true
KEY="$("$BIN" accounts create --email bench@example.com --plan pro --json | jq -r .api_key)"
bench_start_server

TOKEN="$(curl -fsS -X POST "$BASE/v1/workflows" -H "authorization: Bearer $KEY" \
    -H 'content-type: application/json' -d '{
      "name": "P4",
      "trigger_type": "webhook",
      "actions": [
        {"type": "filter_domains", "config": {"op": "gte", "field": "intent_score", "value": 30}},
        {"type": "data_transform", "config": {"operation": "sort", "field": "intent_score", "order": "desc"}}
      ]}' | jq -r .webhook_token)"

BODY="$(python3 -c '
import json
print(json.dumps({"domains": [
    {"domain": f"company{i}.example", "intent_score": 10 * i, "industry": "saas"}
    for i in range(10)]}))')"
cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
LUA
cat >>"$WORK/post.lua" <<'LUA'
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d non2xx=%d socket_errors=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
        e.status, e.connect + e.read + e.write + e.timeout))
end
LUA
# The reference gets the same script (its done()), as a GET.
sed 's/^wrk.method = "POST"/wrk.method = "GET"/' "$WORK/post.lua" >"$WORK/get.lua"

echo "outreach at $BASE (SQLite); wrk -t2 -c$CONNECTIONS -d$DURATION; $(nproc) cores" >&2
wrk -t2 -c"$CONNECTIONS" -d2s -s "$WORK/get.lua" "$BASE/healthz" >/dev/null
wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "$WORK/get.lua" "$BASE/healthz" |
    grep '^RESULT' >"$WORK/healthz.txt"
PERF_PID=""
if [ -n "${BENCH_PERF:-}" ]; then
    perf record -F ${BENCH_PERF_HZ:-999} ${BENCH_PERF_CALLGRAPH:--g} -p "$SERVER_PID" -o "$BENCH_PERF" >/dev/null 2>&1 &
    PERF_PID=$!
fi
wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "$WORK/post.lua" "$BASE/v1/workflows/incoming/$TOKEN" |
    grep '^RESULT' >"$WORK/incoming.txt"

# Waits for the worker to finish what was accepted.
DB="$OUTREACH_DATA_DIR/outreach.db"
for _ in $(seq 1 600); do
    LEFT="$(python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
print(c.execute("SELECT count(*) FROM workflow_runs WHERE finished_at IS NULL").fetchone()[0])' "$DB")"
    [ "$LEFT" = 0 ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/stderr" >&2; exit 1; }
    sleep 0.5
done
RSS_KB="$(awk '/VmHWM/ {print $2}' "/proc/$SERVER_PID/status")"
if [ -n "$PERF_PID" ]; then
    kill -INT "$PERF_PID"
    wait "$PERF_PID" || true
fi

python3 - "$WORK/healthz.txt" "$WORK/incoming.txt" "$DB" "$RSS_KB" "$TARGET" "$ENFORCE" <<'PY'
import json, sqlite3, sys
healthz, incoming, db, rss, target, enforce = sys.argv[1:]
def wrk(path):
    f = dict(kv.split("=", 1) for kv in open(path).read().split()[1:])
    f = {k: int(v) for k, v in f.items()}
    f["rps"] = f["requests"] / (f["duration_us"] / 1e6)
    return f
ref, acc = wrk(healthz), wrk(incoming)
c = sqlite3.connect(db)
rows = c.execute("SELECT status, created_at, finished_at, actions_executed FROM workflow_runs").fetchall()
n = len(rows)
statuses = {}
for s, *_ in rows:
    statuses[s] = statuses.get(s, 0) + 1
records = sum(len(json.loads(r[3])) for r in rows)
events = c.execute("SELECT count(*) FROM workflow_run_events").fetchone()[0]
span = (max(r[2] for r in rows) - min(r[1] for r in rows)) / 1000
lat = sorted(r[2] - r[1] for r in rows)
pct = lambda p: lat[min(len(lat) - 1, int(len(lat) * p / 100))]
rate = n / span
print(f"reference GET /healthz:       {ref['rps']:,.0f} requests/s, p99 {ref['p99_us'] / 1000:.2f} ms")
print(f"incoming webhook (accept):    {acc['rps']:,.0f} calls/s, p50 {acc['p50_us'] / 1000:.2f} ms, p99 {acc['p99_us'] / 1000:.2f} ms, non-2xx {acc['non2xx']}, socket errors {acc['socket_errors']}")
print(f"finished runs:                {rate:,.0f} runs/s ({n:,} runs in {span:.2f} s; {statuses})")
print(f"accept to finished run:       p50 {pct(50)} ms, p99 {pct(99)} ms")
print(f"persisted:                    {records:,} action records, {events:,} stream events")
print(f"ratio runs/s to /healthz:     {rate / ref['rps']:.3f}; server peak RSS {int(rss) / 1024:.0f} MB")
ok = rate >= float(target) and statuses.get("success", 0) == n and records == 2 * n and acc["non2xx"] == 0
if not ok:
    print(f"MISSED: target {int(target):,} runs/s, every run a success with 2 action records")
    if enforce == "1":
        sys.exit(1)
else:
    print(f"target met (>= {int(target):,} runs/s)")
PY
