#!/usr/bin/env bash
# Soak test of the real `outreach` binary (release build) on loopback: full
# load with wrk on GET /v1/account for SOAK_MINUTES, keys rotated on every
# request, nobody scraping /metrics. Reports:
#
#   - requests served, failures apart from 429s (5xx, unexpected 4xx, socket
#     errors), p50/p99;
#   - RSS per minute and the last minute against the first after warm-up;
#   - storage growth of the data directory per million requests;
#   - /v1/usage/stats against the requests the server answered (every one
#     must be counted), the writer's failed flushes and the raw rows it
#     sampled out (recent activity keeps only the newest per account);
#   - each usage endpoint's median latency afterwards (every request of the
#     run is recorded for the one account), and the first request after a
#     restart (the quota counter's seed).
#
# Environment: SOAK_MINUTES (5), SOAK_CONNECTIONS (64), SOAK_THREADS (2),
# SOAK_KEYS (3000), SOAK_POSTGRES=1 (fresh PostgreSQL database on
# 127.0.0.1:5432 instead of embedded SQLite), SOAK_LOCK=1 (another process
# holds the database's write lock for 5 s every 20 s during the load, as a
# backup, a VACUUM or a long migration would: BEGIN EXCLUSIVE on outreach.db
# with python3's sqlite3, or LOCK TABLE usage_rollups IN ACCESS EXCLUSIVE
# MODE in a psql session; SOAK_LOCK_SECONDS and SOAK_LOCK_EVERY change the 5
# and 20), OUTREACH_BIN (skip the build).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MINUTES="${SOAK_MINUTES:-5}"
CONNECTIONS="${SOAK_CONNECTIONS:-64}"
THREADS="${SOAK_THREADS:-2}"
KEYS="${SOAK_KEYS:-3000}"

WORK="$(mktemp -d)"
# shellcheck source=common.sh
. "$ROOT/tests/bench/common.sh"
bench_wrk
BIN="$(bench_binary)"

SERVER_PID=""
SAMPLER_PID=""
LOCKER_PID=""
DB=""
cleanup() {
    [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null || true
    [ -n "$LOCKER_PID" ] && kill "$LOCKER_PID" 2>/dev/null || true
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    [ -n "$DB" ] && psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

export OUTREACH_DATA_DIR="$WORK/data"
export OUTREACH_LISTEN="127.0.0.1:0"
export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
# Millions of requests pass the Enterprise monthly quota of 999,999: lift it,
# as an operator running the server for their own company would.
export OUTREACH_LIMITS_ENTERPRISE_MONTHLY_QUOTA=unlimited
unset OUTREACH_DATABASE_URL OUTREACH_CONFIG || true
if [ "${SOAK_POSTGRES:-0}" = "1" ]; then
    DB="outreach_soak_$$"
    psql -q -h 127.0.0.1 -U postgres -c "CREATE DATABASE $DB" >/dev/null
    export OUTREACH_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB"
fi

PASSWORD="soak password 123"
"$BIN" accounts create --email soak@example.com --plan enterprise \
    --password "$PASSWORD" --json >"$WORK/account.json"

bench_start_server
bench_keys soak@example.com "$PASSWORD" "$KEYS" "$WORK/keys.txt"
KEY="$(head -n1 "$WORK/keys.txt")"

bench_rotate_lua

size() { du -sb "$WORK/data" | awk '{print $1}'; }
# Database size on PostgreSQL, data dir on SQLite.
storage() {
    if [ -n "$DB" ]; then
        psql -qtA -h 127.0.0.1 -U postgres -c "SELECT pg_database_size('$DB')"
    else
        size
    fi
}

BEFORE_BYTES=$(storage)
# RSS every 10 s, in kB.
(while kill -0 "$SERVER_PID" 2>/dev/null; do
    awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || true
    sleep 10
done) >"$WORK/rss.txt" &
SAMPLER_PID=$!

# The lock holder: 5 s of the database's write lock every 20 s (by default),
# the first after 10 s. Each hold is logged (start, seconds waited for the
# lock, held).
: >"$WORK/locks.txt"
if [ "${SOAK_LOCK:-0}" = "1" ]; then
    python3 - "$WORK/data/outreach.db" "${OUTREACH_DATABASE_URL:-}" \
        "${SOAK_LOCK_SECONDS:-5}" "${SOAK_LOCK_EVERY:-20}" >"$WORK/locks.txt" <<'PY' &
import sqlite3, subprocess, sys, time
path, url, hold, every = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
time.sleep(10)
while True:
    t0 = time.time()
    if url:
        # One session: the lock is taken, held and released by COMMIT.
        subprocess.run(["psql", "-qAt", url, "-c",
                        "BEGIN; LOCK TABLE usage_rollups IN ACCESS EXCLUSIVE MODE; "
                        f"SELECT pg_sleep({hold}); COMMIT;"], check=True, stdout=subprocess.DEVNULL)
        held = time.time() - t0
        print(f"lock at {t0:.0f} held {held:.1f} s", flush=True)
    else:
        conn = sqlite3.connect(path, timeout=60, isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        t1 = time.time()
        time.sleep(hold)
        conn.execute("COMMIT")
        conn.close()
        print(f"lock at {t0:.0f} waited {t1 - t0:.1f} s held {time.time() - t1:.1f} s", flush=True)
    time.sleep(max(0.0, every - (time.time() - t0)))
PY
    LOCKER_PID=$!
fi

echo "soak: $MINUTES min, wrk -t$THREADS -c$CONNECTIONS, $KEYS keys, ${OUTREACH_DATABASE_URL:-SQLite}, lock ${SOAK_LOCK:-0}, $(nproc) cores" >&2
[ "${SOAK_LOCK:-0}" = "1" ] && echo "lock: ${SOAK_LOCK_SECONDS:-5} s every ${SOAK_LOCK_EVERY:-20} s" >&2
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${MINUTES}m" --timeout 5s -s "$WORK/rotate.lua" \
    "$BASE/v1/account" -- "$WORK/keys.txt" >"$WORK/wrk.txt"
kill "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""
if [ -n "$LOCKER_PID" ]; then
    kill "$LOCKER_PID" 2>/dev/null || true
    wait "$LOCKER_PID" 2>/dev/null || true
    LOCKER_PID=""
    sleep "$(( ${SOAK_LOCK_SECONDS:-5} + 1 ))" # a lock being held ends (PostgreSQL finishes the pg_sleep)
fi
sleep 3 # one flush interval and more
AFTER_BYTES=$(storage)

curl -fsS "$METRICS/metrics" >"$WORK/metrics.txt"
curl -fsS -H "Authorization: Bearer $KEY" "$BASE/v1/usage/stats?days=1" >"$WORK/stats.json"

# Usage endpoints over the recorded run: median of 25 calls each.
python3 - "$BASE" "$KEY" >"$WORK/endpoints.txt" <<'PY'
import http.client, statistics, sys, time, urllib.parse
base, key = sys.argv[1], sys.argv[2]
u = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
for path in ("/v1/usage/stats?days=30", "/v1/usage/rate-limits", "/v1/usage/recent-activity"):
    times = []
    for _ in range(25):
        t = time.perf_counter()
        conn.request("GET", path, headers={"authorization": "Bearer " + key})
        r = conn.getresponse(); r.read()
        assert r.status == 200, (path, r.status)
        times.append((time.perf_counter() - t) * 1000)
    print(f"ENDPOINT {path} median_ms={statistics.median(times):.2f} max_ms={max(times):.2f}")
PY

# Restart, then time the first authenticated request (the quota seed).
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
bench_start_server
FIRST_MS=$(python3 - "$BASE" "$KEY" <<'PY'
import http.client, sys, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
t = time.perf_counter()
conn.request("GET", "/v1/account", headers={"authorization": "Bearer " + sys.argv[2]})
r = conn.getresponse(); r.read()
print(f"{(time.perf_counter() - t) * 1000:.2f}")
PY
)

python3 - "$WORK" "$BEFORE_BYTES" "$AFTER_BYTES" "$FIRST_MS" <<'PY'
import json, re, statistics, sys
work, before, after, first_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = dict(kv.split("=") for kv in open(f"{work}/wrk.txt").read().split("RESULT ")[1].split())
r = {k: int(v) for k, v in r.items()}
metrics = open(f"{work}/metrics.txt").read()
by_status = {}
for m in re.finditer(r'outreach_http_requests_total\{([^}]*)\} (\d+)', metrics):
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
    if labels.get("route") == "/v1/account":
        by_status[labels["status"]] = by_status.get(labels["status"], 0) + int(m.group(2))
def metric(name):
    return sum(float(v) for v in re.findall(name + r'(?:\{[^}]*\})? ([0-9.e+]+)', metrics))
skipped = int(metric('outreach_usage_raw_rows_skipped_total'))
flush_failures = int(metric('outreach_usage_flush_failures_total'))
unwritten = int(metric('outreach_usage_unwritten_requests'))
served = r["requests"]
secs = r["duration_us"] / 1e6
rate_limited = by_status.get("429", 0)
failures = sum(n for s, n in by_status.items() if s not in ("200", "429"))
print(f"requests {served} in {secs:.0f} s ({served / secs:.0f}/s); p50 {r['p50_us']/1000:.2f} ms, p99 {r['p99_us']/1000:.2f} ms")
print(f"status counts on /v1/account: {dict(sorted(by_status.items()))}; 429s {rate_limited}; failures apart from 429: {failures} (+{r['socket_errors']} socket errors)")
rss = [int(x) for x in open(f"{work}/rss.txt").read().split()]
per_min = [rss[i:i + 6] for i in range(0, len(rss), 6)]
mins = [max(m) / 1024 for m in per_min if m]
print("RSS per minute (MB, max of 10-s samples): " + ", ".join(f"{m:.0f}" for m in mins))
if len(mins) >= 2:
    first, last = mins[0], mins[-1]
    print(f"RSS last minute vs first: {last:.0f} / {first:.0f} MB = {100 * (last - first) / first:+.1f} %")
if len(mins) >= 3:
    first, last = mins[1], mins[-1]
    print(f"RSS last minute vs first after warm-up (minute 2): {last:.0f} / {first:.0f} MB = {100 * (last - first) / first:+.1f} %")
grown = after - before
print(f"storage grew {grown / 1e6:.1f} MB over {served / 1e6:.2f} M requests = {grown / 1e6 / (served / 1e6):.2f} MB per million")
stats = json.load(open(f"{work}/stats.json"))
answered = sum(by_status.values())
counted = stats['total_queries']
print(f"/v1/usage/stats total_queries {counted} vs requests answered {answered} (wrk counted {served}): "
      f"{100 * counted / max(answered, 1):.2f} % counted")
print(f"usage writer: {flush_failures} failed flushes (retried), {unwritten} requests unwritten at the end, "
      f"{skipped} raw rows sampled out of recent activity")
locks = open(f"{work}/locks.txt").read().splitlines()
if locks:
    print(f"database locked {len(locks)} times by another process: " + "; ".join(l.split(' ', 3)[3] for l in locks))
for line in open(f"{work}/endpoints.txt"):
    print(line.strip().replace("ENDPOINT ", "usage endpoint "))
print(f"first request after a restart (quota seed): {first_ms} ms")
PY
