#!/usr/bin/env bash
# Audiences benchmark of the real `outreach` binary over a pool of a million
# synthetic enriched records, on embedded SQLite and on PostgreSQL.
#
# 1. Data: BENCH_ROWS (1,000,000) records with skewed spreads (industries
#    over the taxonomy, 40 countries, business types, confidence and intent
#    0-100, 21 audience and 14 alert signals of different frequencies) are
#    written straight into `domains` and `pool_facets` after `outreach
#    migrate` (audiences.py generate; the time is printed).
# 2. Preview: 50 seeded filter sets (0-3 industries, 0-3 countries,
#    min_confidence, 0-2 required and 0-1 excluded signals, business types,
#    min_intent_score; five broad ones) through `POST /v1/audiences/preview`
#    with an Enterprise key, BENCH_ROUNDS (3) rounds after one untimed pass.
#    Reference in the same run: a plain COUNT(*) with the same WHERE clause
#    straight on the database from Python (sqlite3 / psycopg), right after
#    each request. Also timed, as a diagnosis: the preview's sample query
#    (10 newest matches joined to `domains`) from Python. Target: preview p50
#    under 50 ms.
# 3. Evaluation: 100 active audiences and 100 active alert rules (email and
#    Slack off, in-app on: history, outbox events, no delivery jobs) created
#    through the API, then BENCH_EVENTS (20,000) pool events committed at once
#    into `pool_events` while the server runs; events consumed per second
#    until the table is empty. Reference in the same run: the worker's claim
#    pattern alone (DELETE ... RETURNING the oldest 200 rows, one transaction
#    each) over a copy of the same rows in a table the server does not read.
#
# Prints a figures table at the end. Environment: BENCH_BACKENDS ("sqlite
# postgres"), BENCH_ROWS, BENCH_ROUNDS, BENCH_EVENTS, OUTREACH_BIN (skip the
# release build), CARGO_TARGET_DIR (where the release build goes). PostgreSQL
# runs on a fresh database on 127.0.0.1:5432 (user postgres, trust), dropped
# at the end; psycopg is installed with pip when missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BACKENDS="${BENCH_BACKENDS:-sqlite postgres}"
ROWS="${BENCH_ROWS:-1000000}"
ROUNDS="${BENCH_ROUNDS:-3}"
EVENTS="${BENCH_EVENTS:-20000}"
HELPER="$ROOT/tests/bench/audiences.py"

WORK="$(mktemp -d)"
# shellcheck source=common.sh
. "$ROOT/tests/bench/common.sh"
BIN="$(bench_binary)"

SERVER_PID=""
PG_DB=""
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}
cleanup() {
    stop_server
    if [ -n "$PG_DB" ]; then
        psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

if [[ " $BACKENDS " == *" postgres "* ]] && ! python3 -c 'import psycopg' 2>/dev/null; then
    echo "installing psycopg with pip" >&2
    python3 -m pip install -q "psycopg[binary]" >&2
fi

export OUTREACH_LISTEN="127.0.0.1:0"
export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
unset OUTREACH_CONFIG || true
PASSWORD="bench password 123"
echo "outreach $("$BIN" --version | awk '{print $2}'), $ROWS records, $ROUNDS rounds, $EVENTS events, $(nproc) cores" >&2

run_backend() { # sqlite | postgres
    local backend="$1" url out="$WORK/$1"
    mkdir -p "$out"
    export OUTREACH_DATA_DIR="$out/data"
    if [ "$backend" = postgres ]; then
        PG_DB="outreach_bench_aud_$$"
        psql -q -h 127.0.0.1 -U postgres -c "CREATE DATABASE $PG_DB" >/dev/null
        url="postgres://postgres@127.0.0.1:5432/$PG_DB"
        export OUTREACH_DATABASE_URL="$url"
    else
        unset OUTREACH_DATABASE_URL || true
        url="sqlite://$out/data/outreach.db"
    fi
    "$BIN" migrate >/dev/null
    "$BIN" accounts create --email "bench-$backend@example.com" --plan enterprise \
        --password "$PASSWORD" --json >"$out/account.json"

    echo "[$backend] generating $ROWS records" >&2
    python3 "$HELPER" generate "$url" "$ROWS" >"$out/generate.json"

    SERVER_LOG="$out/stderr" WORK="$out" server_start
    bench_keys "bench-$backend@example.com" "$PASSWORD" 20 "$out/keys.txt"

    echo "[$backend] previews" >&2
    python3 "$HELPER" preview "$url" "$BASE" "$out/keys.txt" "$ROUNDS" >"$out/preview.json"

    echo "[$backend] 100 audiences and 100 alert rules" >&2
    python3 "$HELPER" rules "$BASE" "$out/keys.txt" 100 100 >"$out/rules.json"

    echo "[$backend] evaluation of $EVENTS events" >&2
    python3 "$HELPER" evaluate "$url" "$out/rules.json" "$EVENTS" >"$out/evaluate.json"

    stop_server
    if [ "$backend" = postgres ]; then
        psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null
        PG_DB=""
    fi
    rm -rf "$out/data"
}

for backend in $BACKENDS; do
    run_backend "$backend"
done

python3 - "$WORK" $BACKENDS <<'PY'
import json, sys
work, backends = sys.argv[1], sys.argv[2:]
load = lambda b, n: json.load(open(f"{work}/{b}/{n}.json"))
print()
for b in backends:
    g, p, r, e = (load(b, n) for n in ("generate", "preview", "rules", "evaluate"))
    pv, rf, sm = p["preview"], p["reference"], p["sample_sql"]
    print(f"== {b}: {g['rows']:,} records generated in {g['total_s']:.1f} s "
          f"({g['generate_s']:.1f} s in Python, {g['load_s']:.1f} s into the database)")
    print(f"{'figure':<52} {'p50':>10} {'p99':>10}")
    print(f"{'POST /v1/audiences/preview (50 filters x rounds)':<52} {pv['p50_ms']:>8.1f}ms {pv['p99_ms']:>8.1f}ms")
    print(f"{'reference: COUNT(*) of the same WHERE, in process':<52} {rf['p50_ms']:>8.1f}ms {rf['p99_ms']:>8.1f}ms")
    print(f"{'diagnosis: the preview sample query, in process':<52} {sm['p50_ms']:>8.1f}ms {sm['p99_ms']:>8.1f}ms")
    print(f"{'ratio preview / reference':<52} {pv['p50_ms'] / rf['p50_ms']:>9.2f}x {pv['p99_ms'] / rf['p99_ms']:>9.2f}x")
    ac = r["audience_create"]
    print(f"{'POST /v1/audiences (exact count), 100 creations':<52} {ac['p50_ms']:>8.1f}ms {ac['p99_ms']:>8.1f}ms")
    verdict = "met" if pv["p50_ms"] < 50 else "MISSED"
    print(f"preview p50 target < 50 ms: {verdict}")
    print("slowest filters (median preview / count / sample ms, matches):")
    for s in p["slowest"]:
        print(f"  {s['preview_ms']:8.1f} {s['count_ms']:8.1f} {s['sample_ms']:8.1f} {s['match_count']:>8}  {json.dumps(s['filters'])}")
    print(f"evaluation: {e['events_per_s']:,.0f} events/s ({e['timed_events']:,} events in {e['eval_s']:.2f} s; "
          f"worker started {e['start_lag_s']:.2f} s after the commit; {e['events_starting_a_match']:,} events "
          f"start a match: {e['audience_match_starts']:,} audience and {e['alert_match_starts']:,} alert-rule "
          f"matches, {e['alert_history_rows']:,} history rows)")
    print(f"reference claim only: {e['reference_per_s']:,.0f} rows/s; ratio evaluation / reference "
          f"{e['events_per_s'] / e['reference_per_s']:.2f}")
    print()
PY
