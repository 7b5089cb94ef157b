#!/usr/bin/env bash
# enroll-csv benchmark: contacts per second through the whole enroll path
# on embedded SQLite, against a plain multi-row insert of the same rows into
# the same table, in the same run and database (the reference).
#
#   1. The real thing: the release `outreach serve`; the account suppresses
#      1,000 of the file's addresses; one POST of a BENCH_CONTACTS-row CSV
#      (with 1,000 suppressed and 1,000 duplicate addresses mixed in) to
#      /v1/sequences/{id}/enroll-csv, timed by curl from the first byte sent
#      to the answer: authentication, multipart, CSV parsing, address
#      checks, the suppression and live-enrollment filter and the insert.
#   2. The reference: with the server stopped, Python's sqlite3 inserts the
#      file's distinct rows into `enrollments` for a second sequence with
#      plain multi-row INSERT ... VALUES statements in one transaction (the
#      row strings are built before the clock starts).
#
# Targets: at least 0.5 of the reference's rows/s and at least 50,000
# contacts/s (BENCH_ENFORCE=0 only reports).
# Environment: BENCH_CONTACTS (100000), OUTREACH_BIN (skip the release
# build), CARGO_TARGET_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CONTACTS="${BENCH_CONTACTS:-100000}"
ENFORCE="${BENCH_ENFORCE:-1}"

WORK="$(mktemp -d)"
# shellcheck source=common.sh
. "$ROOT/tests/bench/common.sh"
BIN="$(bench_binary)"
SERVER_PID=""
cleanup() {
    bench_stop "$SERVER_PID"
    rm -rf "$WORK"
}
trap cleanup EXIT

# The file: CONTACTS rows, of which 1,000 repeat an earlier address and
# 1,000 are on the suppression list.
python3 - "$CONTACTS" "$WORK" <<'PY'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
# Short rows so that 100,000 of them fit the 5 MB limit (about 4 MB).
base = [(f"l{i}@c{i % 5000}.io", f"c{i % 5000}.io", f"F{i}", f"C{i % 5000}")
        for i in range(n - 1000)]
rows = list(base)
for i in range(1000):
    rows.insert(i * 97 + 50, base[i * 37])
with open(f"{work}/contacts.csv", "w") as f:
    f.write("email,domain,first_name,company\n")
    for r in rows:
        f.write(",".join(r) + "\n")
with open(f"{work}/suppressed.json", "w") as f:
    json.dump({"emails": [base[i * 90 + 7][0] for i in range(1000)]}, f)
PY
echo "file: $CONTACTS rows, $(( $(stat -c %s "$WORK/contacts.csv") / 1024 )) KB" >&2

export OUTREACH_DATA_DIR="$WORK/data"
export OUTREACH_LISTEN="127.0.0.1:0"
export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
export OUTREACH_LOG=warn
unset OUTREACH_DATABASE_URL OUTREACH_CONFIG || true
ACCOUNT="$("$BIN" accounts create --email bench@example.com --plan enterprise --json)"
ACCOUNT_ID="$(echo "$ACCOUNT" | jq -r .account_id)"
KEY="$(echo "$ACCOUNT" | jq -r .api_key)"
bench_start_server
api() { curl -fsS -H "authorization: Bearer $KEY" -H 'content-type: application/json' "$@"; }
api -X POST "$BASE/v1/sequences/suppression/import" -d @"$WORK/suppressed.json" >/dev/null
SEQ="$(api -X POST "$BASE/v1/sequences" -d '{"name": "bench"}' | jq .id)"
REF_SEQ="$(api -X POST "$BASE/v1/sequences" -d '{"name": "reference"}' | jq .id)"

echo "end to end: POST enroll-csv" >&2
SECS="$(curl -fsS -o "$WORK/answer.json" -w '%{time_total}' -H "authorization: Bearer $KEY" \
    -F "file=@$WORK/contacts.csv;type=text/csv" "$BASE/v1/sequences/$SEQ/enroll-csv")"
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""

echo "reference: plain multi-row INSERT of the same rows" >&2
REF="$(python3 - "$OUTREACH_DATA_DIR/outreach.db" "$ACCOUNT_ID" "$REF_SEQ" "$WORK/contacts.csv" <<'PY'
import csv, json, sqlite3, sys, time
db, account, seq, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
seen, rows = set(), []
with open(path) as f:
    for r in csv.DictReader(f):
        if r["email"] in seen:
            continue
        seen.add(r["email"])
        meta = json.dumps({"first_name": r["first_name"], "company": r["company"]})
        rows.append((account, seq, r["domain"], r["email"], meta, 1_795_000_000_000))
chunk = 1000
sql = ("INSERT INTO enrollments (account_id, sequence_id, domain, contact_email, metadata, status, "
       "current_step, next_send_at, lead_temperature, engagement_score, goal_completed, enrolled_at, "
       "updated_at) VALUES " + ", ".join(["(?, ?, ?, ?, ?, 'active', 1, ?, 'cold', 0, 0, 0, 0)"] * chunk))
batches = [[v for row in rows[i:i + chunk] for v in row] for i in range(0, len(rows), chunk)]
conn = sqlite3.connect(db, timeout=30, isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA synchronous=NORMAL")
start = time.perf_counter()
conn.execute("BEGIN")
for b in batches:
    n = len(b) // 6
    conn.execute(sql if n == chunk else sql.rsplit(" VALUES ", 1)[0] + " VALUES " +
                 ", ".join(["(?, ?, ?, ?, ?, 'active', 1, ?, 'cold', 0, 0, 0, 0)"] * n), b)
conn.execute("COMMIT")
print(len(rows) / (time.perf_counter() - start))
PY
)"

python3 - "$CONTACTS" "$SECS" "$REF" "$WORK/answer.json" "$ENFORCE" <<'PY'
import json, sys
n, secs, ref, answer, enforce = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
a = json.load(open(answer))
rate = n / secs
print(f"reference (plain multi-row insert): {ref:,.0f} rows/s")
print(f"enroll-csv end to end:              {rate:,.0f} contacts/s ({n:,} in {secs:.2f} s: "
      f"enrolled {a['enrolled']:,}, skipped {a['skipped']:,}, total_in_file {a['total_in_file']:,})")
print(f"ratio:                              {rate / ref:.2f}")
assert a["enrolled"] == n - 2000 and a["skipped"] == 2000, a["skipped"]
if enforce == "1" and (rate < 50_000 or rate / ref < 0.5):
    sys.exit("target missed: below 50,000 contacts/s or below 0.5 of the reference")
PY
