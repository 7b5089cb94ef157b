#!/usr/bin/env bash
# Marketplace search benchmark: `GET /v1/workflows/marketplace` with `q` and
# `sort=top_rated` over 100,000 entries on embedded SQLite (release build),
# against a plain `SELECT * FROM marketplace_entries LIMIT 20` on the same
# database file in the same run (the reference).
#
#   1. The server starts on a fresh data dir (migrations applied); 20 author
#      accounts and a reader are created with the CLI.
#   2. 100,000 entries are written straight into the database in one
#      transaction (the server's own insert trigger fills the trigram index),
#      names and descriptions drawn from a 120-word vocabulary, installs and
#      ratings spread. Python's own SQLite is too old for the index, so a
#      venv with pysqlite3-binary (SQLite 3.51) writes and reads.
#   3. wrk with one connection reads the endpoint for BENCH_DURATION per
#      query: p50 and p99 of sequential requests.
#
# Target: p50 under 20 ms for `q=hubspot&sort=top_rated` (about 12% of the
# entries match). BENCH_ENFORCE=0 only reports.
# Environment: BENCH_DURATION (10s), OUTREACH_BIN (skip the release build),
# CARGO_TARGET_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DURATION="${BENCH_DURATION:-10s}"
ENFORCE="${BENCH_ENFORCE:-1}"
ENTRIES="${BENCH_ENTRIES:-100000}"
TARGET_MS=20

WORK="$(mktemp -d)"
# shellcheck source=common.sh
. "$ROOT/tests/bench/common.sh"
bench_wrk
BIN="$(bench_binary)"

VENV="$(bench_pysqlite_venv)"

SERVER_PID=""
cleanup() {
    bench_stop "$SERVER_PID"
    rm -rf "$WORK"
}
trap cleanup EXIT

export OUTREACH_DATA_DIR="$WORK/data"
export OUTREACH_LISTEN="127.0.0.1:0"
export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
export OUTREACH_LOG=warn
# The reader's plan limits would answer 429 within the first seconds of
# sequential requests; the limiter still runs.
export OUTREACH_LIMITS_STARTER_REQUESTS_PER_MINUTE=unlimited
export OUTREACH_LIMITS_STARTER_MONTHLY_QUOTA=unlimited
unset OUTREACH_DATABASE_URL OUTREACH_CONFIG || true
KEY="$("$BIN" accounts create --email reader@example.com --plan starter --json | jq -r .api_key)"
for i in $(seq 1 20); do
    "$BIN" accounts create --email "author$i@example.com" --plan enterprise --json >/dev/null
done
bench_start_server
DB="$OUTREACH_DATA_DIR/outreach.db"

"$VENV/bin/python" - "$DB" "$ENTRIES" <<'PY'
import json, random, sys, time
import pysqlite3 as sqlite3
db, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
words = """enrich score list sequence slack alert watch domain saas agency crm lead hubspot
digest weekly intent outbound cleanup dedup notify email reply inbox pipeline tech stack
funding hiring salesforce pipedrive webhook sheet export import audience segment persona
account contact company founder revenue growth churn renewal trial signup demo meeting
calendar follow-up nurture cadence warmup deliverability bounce verify validate clearbit
apollo linkedin twitter website crawl keyword mention competitor pricing page job posting
series seed ecommerce shopify stripe billing invoice fintech health clinic school realestate
logistics fleet manufacturing factory energy solar media podcast nonprofit donor government
tender approval manager review summary report dashboard daily monthly quarterly priority
hot warm cold tier ranking filter branch parallel merge memory schedule trigger event
enrichment firmographic technographic signal spike surge drop change monitor""".split()
assert len(words) >= 120, len(words)
c = sqlite3.connect(db, timeout=60)
authors = [r[0] for r in c.execute("SELECT id FROM accounts WHERE id > 1 ORDER BY id")]
c.execute("BEGIN")
for a in authors:
    c.execute("INSERT INTO marketplace_authors (account_id, handle) VALUES (?, ?)", (a, f"author-{a}"))
categories = ["outbound", "enrichment", "monitoring", "notifications", "data-cleanup", "scoring", "ai", "integrations"]
definition = json.dumps({"trigger_config": {}, "conditions": [], "actions": [
    {"type": "enrich", "config": {"fields": ["dns", "tech_stack"]}},
    {"type": "add_to_list", "config": {"list_id": "{{placeholder:list_id}}"}}],
    "execution_limits": {}, "retry_failed": False})
start = time.time()
rows = []
for i in range(n):
    name = " ".join(random.choice(words) for _ in range(4)).capitalize() + f" #{i}"
    desc = " ".join(random.choice(words) for _ in range(12)).capitalize() + "."
    count = random.choice([0, 0, 1, 2, 3, 5, 8, 13, 40])
    total = sum(random.randint(1, 5) for _ in range(count))
    rows.append((authors[i % len(authors)], name, name.lower(), desc, f"{name}\n{desc}".lower(),
                 random.choice(categories), json.dumps(["bench"]), random.choice(["beginner", "intermediate", "advanced"]),
                 "manual", definition, random.randint(0, 5000), total, count,
                 total / count if count else 0.0, 0 if i % 50 == 0 else 1, 1_700_000_000_000 + i * 1000))
c.executemany(
    "INSERT INTO marketplace_entries (account_id, name, name_key, description, search_text, category, tags, "
    "difficulty, trigger_type, definition, install_count, rating_sum, rating_count, average_rating, is_public, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
c.execute("COMMIT")
print(f"seeded {n:,} entries in {time.time() - start:.1f} s", file=sys.stderr)
PY

# The reference: the plain page query on the same file, many times.
REF_MS="$("$VENV/bin/python" - "$DB" <<'PY'
import sys, time
import pysqlite3 as sqlite3
c = sqlite3.connect(sys.argv[1])
t = []
for _ in range(2000):
    s = time.perf_counter()
    c.execute("SELECT * FROM marketplace_entries LIMIT 20").fetchall()
    t.append(time.perf_counter() - s)
t.sort()
print(f"{t[len(t) // 2] * 1000:.3f} {t[int(len(t) * 0.99)] * 1000:.3f}")
PY
)"

cat >"$WORK/get.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $KEY"
function done(summary, latency, requests)
    io.write(string.format("RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d non2xx=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
        summary.errors.status))
end
LUA
measure() {
    wrk -t1 -c1 -d2s -s "$WORK/get.lua" "$BASE$1" >/dev/null
    wrk -t1 -c1 -d"$DURATION" -s "$WORK/get.lua" "$BASE$1" | grep '^RESULT'
}
echo "outreach at $BASE (SQLite, $ENTRIES entries); wrk -t1 -c1 -d$DURATION; $(nproc) cores" >&2
MAIN="$(measure '/v1/workflows/marketplace?q=hubspot&sort=top_rated')"
TOTAL="$(curl -fsS -H "authorization: Bearer $KEY" "$BASE/v1/workflows/marketplace?q=hubspot&sort=top_rated" | jq .total)"
RARE="$(measure '/v1/workflows/marketplace?q=solar%20podcast&sort=top_rated')"
PLAIN="$(measure '/v1/workflows/marketplace?sort=top_rated')"
SHORT="$(measure '/v1/workflows/marketplace?q=ai&sort=newest&category=ai')"

python3 - "$REF_MS" "$TARGET_MS" "$ENFORCE" "$TOTAL" "$MAIN" "$RARE" "$PLAIN" "$SHORT" <<'PY'
import sys
ref, target, enforce, total = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ref_p50, ref_p99 = map(float, ref.split())
def parse(line):
    f = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    f["rps"] = f["requests"] / (f["duration_us"] / 1e6)
    return f
runs = [("q=hubspot, top_rated", parse(sys.argv[5])), ("q='solar podcast', top_rated", parse(sys.argv[6])),
        ("no q, top_rated", parse(sys.argv[7])), ("q=ai (2 chars, scan), category, newest", parse(sys.argv[8]))]
print(f"reference SELECT * LIMIT 20:   p50 {ref_p50:.3f} ms, p99 {ref_p99:.3f} ms (pysqlite3, same file)")
for name, f in runs:
    print(f"{name:<40} p50 {f['p50_us'] / 1000:.2f} ms, p99 {f['p99_us'] / 1000:.2f} ms, {f['rps']:,.0f} requests/s, non-2xx {f['non2xx']}")
main = runs[0][1]
print(f"q=hubspot matched {total:,} entries; p50 / reference p50: {main['p50_us'] / 1000 / ref_p50:.1f}x")
ok = main["p50_us"] / 1000 < target and all(f["non2xx"] == 0 for _, f in runs)
if ok:
    print(f"target met (p50 < {target:.0f} ms)")
else:
    print(f"MISSED: target p50 < {target:.0f} ms with every answer 2xx")
    if enforce == "1":
        sys.exit(1)
PY
