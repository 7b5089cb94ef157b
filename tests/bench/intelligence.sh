#!/usr/bin/env bash
# Market-intelligence benchmark on embedded SQLite (release build):
#
#   1. One million synthetic pool records (16 industries, 40 countries, 200
#      cities, entered over two years, 60% with an email) are written
#      straight into the database with their facet rows, then
#      `outreach domains rebuild-rollups` computes the rollups once, as the
#      pool's saves would have kept them.
#   2. A Pro account tracks 10 competitors through the API.
#   3. wrk with one connection reads each endpoint for BENCH_DURATION:
#      p50 and p99 of sequential requests. The reference, in the same run
#      on the same file: a plain `SELECT COUNT(*) FROM pool_facets` (the
#      same million rows) with pysqlite3.
#   4. The keyword automaton: 10,000 tracked keywords against the summaries
#      of 100,000 records (host/leads/examples/keyword_bench.rs).
#
# Targets (issue 32): p50 under 100 ms for geo, report (JSON), overview and
# market-share, under 300 ms for the PDF. BENCH_ENFORCE=0 only reports.
# Environment: BENCH_DURATION (10s), BENCH_RECORDS (1000000), OUTREACH_BIN
# (skip the release build of the server), CARGO_TARGET_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DURATION="${BENCH_DURATION:-10s}"
ENFORCE="${BENCH_ENFORCE:-1}"
RECORDS="${BENCH_RECORDS:-1000000}"

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
# Sequential requests would meet the plan's minute limit within seconds;
# the limiter still runs.
export OUTREACH_LIMITS_PRO_REQUESTS_PER_MINUTE=unlimited
export OUTREACH_LIMITS_PRO_MONTHLY_QUOTA=unlimited
unset OUTREACH_DATABASE_URL OUTREACH_CONFIG || true
KEY="$("$BIN" accounts create --email analyst@example.com --plan pro --json | jq -r .api_key)"
DB="$OUTREACH_DATA_DIR/outreach.db"

"$VENV/bin/python" - "$DB" "$RECORDS" <<'PY'
import random, sys, time
import pysqlite3 as sqlite3
db, n = sys.argv[1], int(sys.argv[2])
random.seed(11)
industries = ["Software", "IT Services", "Retail", "Manufacturing", "Financial Services", "Healthcare",
              "Professional Services", "Marketing & Advertising", "Education", "Real Estate & Construction",
              "Hospitality & Travel", "Transportation & Logistics", "Energy & Utilities",
              "Media & Entertainment", "Non-profit", "Government"]
weights = [25, 10, 12, 8, 7, 7, 6, 5, 4, 4, 3, 3, 2, 2, 1, 1]
countries = ["US", "DE", "GB", "FR", "NL", "ES", "IT", "CA", "AU", "SE", "CH", "AT", "BE", "DK", "NO",
             "FI", "IE", "PL", "PT", "CZ", "BR", "MX", "IN", "JP", "SG", "NZ", "ZA", "IL", "AE", "KR",
             "AR", "CL", "CO", "RO", "HU", "GR", "TR", "UA", "EE", "LT"]
cweights = [40 - i for i in range(len(countries))]
now = int(time.time() * 1000)
span = 730 * 86_400_000
c = sqlite3.connect(db, timeout=60)
c.execute("PRAGMA journal_mode=WAL")
start = time.time()
c.execute("BEGIN")
domains, facets = [], []
for i in range(1, n + 1):
    industry = random.choices(industries, weights)[0] if random.random() < 0.9 else None
    country = random.choices(countries, cweights)[0] if random.random() < 0.95 else None
    city = f"{country} City {random.randint(1, 5)}" if country and random.random() < 0.8 else None
    email = f"info@d{i}.com" if random.random() < 0.6 else None
    conf = round(random.uniform(0.3, 0.99), 2)
    created = now - random.randint(0, span)
    summary = f"Company {i} offers {(industry or 'services').lower()} for teams in {country or 'many places'}."
    domains.append((i, f"d{i}.com", "enriched", summary, industry, conf, email, country, city, created, created))
    facets.append((i, industry.lower() if industry else None, country, conf * 100 // 1, city,
                   1 if email else 0, int(round(conf * 10000)), created))
    if len(domains) == 50_000:
        c.executemany("INSERT INTO domains (id, domain, status, summary, industry, business_type, confidence, "
                      "website_email, registrant_country, city, source, created_at, enriched_at, updated_at) "
                      "VALUES (?, ?, ?, ?, ?, 'B2B', ?, ?, ?, ?, 'import', ?, ?, ?)",
                      [d + (d[-1],) for d in domains])
        c.executemany("INSERT INTO pool_facets (domain_id, industry, country, business_type, confidence, "
                      "intent_score, signal_bits, seen_at, city, has_email, confidence_bp, entered_at) "
                      "VALUES (?, ?, ?, 'B2B', ?, 0, 0, ?, ?, ?, ?, ?)",
                      [(f[0], f[1], f[2], int(f[3]), f[7], f[4], f[5], f[6], f[7]) for f in facets])
        domains, facets = [], []
assert not domains
c.execute("COMMIT")
c.execute("ANALYZE")
print(f"seeded {n:,} records in {time.time() - start:.1f} s", file=sys.stderr)
PY
"$BIN" domains rebuild-rollups >&2
bench_start_server

# Ten competitors, all in the pool already.
for i in 1 2 3 4 5 6 7 8 9 10; do
    curl -fsS -o /dev/null -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
        -d "{\"domain\": \"d$((i * 7919)).com\"}" "$BASE/v1/intelligence/competitors"
done

REF="$("$VENV/bin/python" - "$DB" <<'PY'
import sys, time
import pysqlite3 as sqlite3
c = sqlite3.connect(sys.argv[1])
t = []
for _ in range(50):
    s = time.perf_counter()
    c.execute("SELECT COUNT(*) FROM pool_facets").fetchall()
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
    printf '%s %s\n' "$(wrk -t1 -c1 -d"$DURATION" -s "$WORK/get.lua" "$BASE$1" | grep '^RESULT')" "$1"
}
echo "outreach at $BASE (SQLite, $RECORDS records); wrk -t1 -c1 -d$DURATION; $(nproc) cores" >&2
RESULTS="$WORK/results"
{
    measure '/v1/intelligence/geo'
    measure '/v1/intelligence/geo?days=365'
    measure '/v1/intelligence/geo/cities?country=US&days=365'
    measure '/v1/intelligence/report/software'
    measure '/v1/intelligence/industry/software'
    measure '/v1/intelligence/overview'
    measure '/v1/intelligence/competitors/market-share'
    measure '/v1/intelligence/competitors/digest'
    measure '/v1/intelligence/report/software?format=pdf'
} >"$RESULTS"

python3 - "$REF" "$ENFORCE" "$RESULTS" <<'PY'
import sys
ref, enforce, path = sys.argv[1], sys.argv[2], sys.argv[3]
ref_p50, ref_p99 = map(float, ref.split())
targets = {"/v1/intelligence/geo": 100, "/v1/intelligence/report/software": 100,
           "/v1/intelligence/overview": 100, "/v1/intelligence/competitors/market-share": 100,
           "/v1/intelligence/report/software?format=pdf": 300}
print(f"reference SELECT COUNT(*) FROM pool_facets: p50 {ref_p50:.2f} ms, p99 {ref_p99:.2f} ms (pysqlite3, same file)")
ok = True
for line in open(path):
    parts = line.split()
    f = {k: int(v) for k, v in (kv.split("=") for kv in parts[1:-1])}
    url = parts[-1]
    p50, p99 = f["p50_us"] / 1000, f["p99_us"] / 1000
    target = targets.get(url)
    mark = ""
    if target is not None:
        met = p50 < target and f["non2xx"] == 0
        ok &= met
        mark = f"  target {target} ms {'met' if met else 'MISSED'}"
    print(f"{url:<52} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  p50/ref {p50 / ref_p50:5.2f}  non-2xx {f['non2xx']}{mark}")
if not ok and enforce == "1":
    sys.exit(1)
PY

# BENCH_PAGE=FILE keeps page 1 of the million-record report as a PNG
# (docs/intelligence-report.png is one).
if [ -n "${BENCH_PAGE:-}" ]; then
    curl -fsS -H "authorization: Bearer $KEY" -o "$WORK/report.pdf" \
        "$BASE/v1/intelligence/report/software?format=pdf"
    pdftoppm -png -r 80 -f 1 -l 1 -singlefile "$WORK/report.pdf" "${BENCH_PAGE%.png}"
fi

(cd "$ROOT" && cargo run --quiet --release -p outreach-leads --example keyword_bench)
