#!/usr/bin/env bash
# Sending benchmarks (issue 9), release build, embedded SQLite:
#
#   P2  BENCH_MESSAGES (20,000) personalised messages through the whole
#       engine (claim and plan, render with tokens, tracking, compose, SMTP,
#       record) to Postfix's smtp-sink, against smtp-source sending the same
#       number of same-size messages to the same sink over the same number
#       of connections, in the same run. Target: at least 0.5 of
#       smtp-source's messages per second.
#   P8  Peak RSS (VmHWM) of `outreach serve` during a BENCH_BIG (100,000)
#       message send. Target: under 57 MB.
#
# The engine's messages go out from SEQUENCES sequences of 10,000 contacts
# (the spec's largest daily_send_limit), each with its own send account, and
# so over BENCH_CONNECTIONS (4) connections per account; smtp-source gets the
# same number of sessions. Needs tests/support/mail.sh's Dovecot (connecting
# a send account tests IMAP too). Environment: BENCH_MESSAGES, BENCH_BIG
# (0 skips P8), BENCH_ENFORCE (0 only reports), OUTREACH_BIN, CARGO_TARGET_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MESSAGES="${BENCH_MESSAGES:-20000}"
BIG="${BENCH_BIG:-100000}"
ENFORCE="${BENCH_ENFORCE:-1}"
PER_SEQUENCE=10000
# SMTP connections per send account (the server's
# sender_connections_per_account); smtp-source gets as many sessions in all.
LANES="${BENCH_CONNECTIONS:-4}"
export OUTREACH_SENDER_CONNECTIONS_PER_ACCOUNT="$LANES"
SINK_PORT=12625
# One personalised step: tokens in the subject and body, two tracked links.
STEP='{"subject": "{{first_name}}, a question about {{company}}",
    "body_html": "<p>Hi {{first_name}},</p><p>I noticed {{company}} is growing and wanted to share how teams like yours cut their outbound costs. Our <a href=\"https://example.com/pricing\">pricing</a> and <a href=\"https://example.com/cases\">case studies</a> show how.</p><p>Would a short call next week work?</p><p>Best,<br>Bench</p>"}'

WORK="$(mktemp -d)"
# shellcheck source=common.sh
. "$ROOT/tests/bench/common.sh"
"$ROOT/tests/support/mail.sh" >&2
BIN="$(bench_binary)"
SERVER_PID=""
SINK_PID=""
cleanup() {
    bench_stop "$SERVER_PID" "$SINK_PID"
    rm -rf "$WORK"
}
trap cleanup EXIT

# smtp-sink announces AUTH and accepts any login; 256 is its listen backlog.
smtp-sink -u nobody "127.0.0.1:$SINK_PORT" 256 >"$WORK/sink.log" 2>&1 &
SINK_PID=$!
sleep 0.3

# run_engine COUNT: enrolls COUNT contacts over COUNT/10,000 sequences and
# mailboxes, activates them and waits until every message is recorded sent.
# Prints "seconds bytes_per_message peak_rss_kb".
run_engine() {
    local count=$1 sequences=$(( ($1 + PER_SEQUENCE - 1) / PER_SEQUENCE ))
    rm -rf "$WORK/data"
    export OUTREACH_DATA_DIR="$WORK/data"
    export OUTREACH_LISTEN="127.0.0.1:0"
    export OUTREACH_METRICS_LISTEN="127.0.0.1:0"
    export OUTREACH_LOG="${BENCH_LOG:-warn}"
    export OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK=true
    export OUTREACH_PUBLIC_BASE_URL="https://links.example.net"
    unset OUTREACH_DATABASE_URL OUTREACH_CONFIG || true
    local account key
    account="$("$BIN" accounts create --email bench@example.com --plan enterprise --json)"
    key="$(echo "$account" | jq -r .api_key)"
    bench_start_server
    api() { curl -fsS -H "authorization: Bearer $key" -H 'content-type: application/json' "$@"; }
    local ids=()
    for s in $(seq 1 "$sequences"); do
        api -X POST "$BASE/v1/send-accounts" -d "{\"email\": \"sender$s@bench.example\",
            \"smtp_host\": \"127.0.0.1\", \"smtp_port\": $SINK_PORT, \"smtp_encryption\": \"none\",
            \"smtp_username\": \"u\", \"smtp_password\": \"p\", \"imap_host\": \"127.0.0.1\",
            \"imap_port\": 11143, \"imap_username\": \"seller@outreach.test\",
            \"imap_password\": \"mail-pass-1\", \"daily_send_limit\": $PER_SEQUENCE}" >/dev/null
        local id
        id="$(api -X POST "$BASE/v1/sequences" -d "{\"name\": \"bench $s\",
            \"from_email\": \"sender$s@bench.example\", \"from_name\": \"Bench Sender\",
            \"daily_send_limit\": $PER_SEQUENCE}" | jq .id)"
        api -X POST "$BASE/v1/sequences/$id/steps" -d "$STEP" >/dev/null
        python3 - "$WORK/contacts-$s.csv" "$s" "$PER_SEQUENCE" <<'PY'
import sys
path, s, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "w") as f:
    f.write("email,domain,first_name,company\n")
    for i in range(n):
        f.write(f"p{s}x{i}@c{i % 5000}.example,c{i % 5000}.example,Person{i},Company {i % 5000}\n")
PY
        curl -fsS -H "authorization: Bearer $key" -F "file=@$WORK/contacts-$s.csv;type=text/csv" \
            "$BASE/v1/sequences/$id/enroll-csv" >/dev/null
        ids+=("$id")
    done
    # P8 is the peak during the send: the peak the start-up and set-up
    # reached (compiling the embedded plugins on a first start, the CSV
    # uploads) is reset first ("5" resets VmHWM, proc(5)).
    echo 5 >"/proc/$SERVER_PID/clear_refs"
    local start
    start="$(date +%s.%N)"
    for id in "${ids[@]}"; do api -X POST "$BASE/v1/sequences/$id/activate" >/dev/null; done
    python3 - "$OUTREACH_DATA_DIR/outreach.db" "$count" "$start" "$SERVER_PID" <<'PY'
import os, sqlite3, sys, time
db, count, start, pid = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
conn = sqlite3.connect(db, timeout=30)
def cpu():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
cpu_start = cpu()
deadline = time.time() + 1800
while True:
    sent = conn.execute("SELECT COUNT(*) FROM sequence_messages WHERE status = 'sent'").fetchone()[0]
    if sent >= count:
        break
    if time.time() > deadline:
        sys.exit(f"only {sent} of {count} sent in time")
    time.sleep(0.05)
secs = time.time() - start
hwm = next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmHWM"))
print(f"server CPU: {(cpu() - cpu_start) * 1e6 / count:.0f} us per message", file=sys.stderr)
print(secs, 0, hwm)
PY
    [ -n "${BENCH_KEEP_LOG:-}" ] && cp "$WORK/stderr" "$BENCH_KEEP_LOG"
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
}

# The size of one engine message as a server receives it: a test-send of
# the same step and contact data to a second smtp-sink that dumps to files.
measure_size() {
    local dump_port=$((SINK_PORT + 1)) dump_pid
    # smtp-sink writes as nobody, which cannot enter $WORK.
    local dump
    dump="$(mktemp -d)" && chmod 777 "$dump"
    smtp-sink -u nobody -d "$dump/%M." "127.0.0.1:$dump_port" 16 >/dev/null 2>&1 &
    dump_pid=$!
    sleep 0.3
    rm -rf "$WORK/data"
    export OUTREACH_DATA_DIR="$WORK/data" OUTREACH_LISTEN="127.0.0.1:0" \
        OUTREACH_METRICS_LISTEN="127.0.0.1:0" OUTREACH_LOG=warn \
        OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK=true OUTREACH_PUBLIC_BASE_URL="https://links.example.net"
    local key
    key="$("$BIN" accounts create --email size@example.com --plan enterprise --json | jq -r .api_key)"
    bench_start_server
    api() { curl -fsS -H "authorization: Bearer $key" -H 'content-type: application/json' "$@"; }
    api -X POST "$BASE/v1/send-accounts" -d "{\"email\": \"sender1@bench.example\",
        \"smtp_host\": \"127.0.0.1\", \"smtp_port\": $dump_port, \"smtp_encryption\": \"none\",
        \"smtp_username\": \"u\", \"smtp_password\": \"p\", \"imap_host\": \"127.0.0.1\",
        \"imap_port\": 11143, \"imap_username\": \"seller@outreach.test\",
        \"imap_password\": \"mail-pass-1\"}" >/dev/null
    local id
    id="$(api -X POST "$BASE/v1/sequences" -d '{"name": "size", "from_email": "sender1@bench.example",
        "from_name": "Bench Sender"}' | jq .id)"
    api -X POST "$BASE/v1/sequences/$id/steps" -d "$STEP" >/dev/null
    api -X POST "$BASE/v1/sequences/$id/test-send" -d '{"to_email": "p1x1@c1.example",
        "step_position": 1, "contact": {"contact_email": "p1x1@c1.example", "domain": "c1.example",
        "metadata": {"first_name": "Person1", "company": "Company 1"}}}' >/dev/null
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
    kill "$dump_pid"; wait "$dump_pid" 2>/dev/null || true
    # The test-send has no tracking links or unsubscribe footer; the real
    # sends add about 400 bytes of them.
    echo $(( $(cat "$dump"/* | wc -c) + 400 ))
    rm -rf "$dump"
}
SIZE="${BENCH_MESSAGE_BYTES:-$(measure_size)}"
SESSIONS=$(( (MESSAGES + PER_SEQUENCE - 1) / PER_SEQUENCE * LANES ))

echo "reference: smtp-source, $MESSAGES messages of $SIZE bytes over $SESSIONS sessions" >&2
REF_START="$(date +%s.%N)"
smtp-source -s "$SESSIONS" -m "$MESSAGES" -l "$SIZE" -f ref@bench.example -t sink@bench.example \
    "127.0.0.1:$SINK_PORT"
REF_SECS="$(echo "$(date +%s.%N) - $REF_START" | bc)"

echo "engine: $MESSAGES messages" >&2
read -r ENGINE_SECS _ ENGINE_RSS <<<"$(run_engine "$MESSAGES")"

BIG_SECS=0; BIG_RSS=0
if [ "$BIG" -gt 0 ]; then
    echo "engine: $BIG messages (peak RSS)" >&2
    read -r BIG_SECS _ BIG_RSS <<<"$(run_engine "$BIG")"
fi

python3 - "$MESSAGES" "$REF_SECS" "$ENGINE_SECS" "$ENGINE_RSS" "$BIG" "$BIG_SECS" "$BIG_RSS" "$ENFORCE" "$SESSIONS" <<'PY'
import sys
n, ref_s, eng_s, eng_rss, big, big_s, big_rss, enforce, sessions = sys.argv[1:]
n, ref_s, eng_s, big, big_s = int(n), float(ref_s), float(eng_s), int(big), float(big_s)
ref, eng = n / ref_s, n / eng_s
print(f"P2 reference (smtp-source, {sessions} sessions): {ref:,.0f} messages/s")
print(f"P2 engine (claim, render, SMTP, record):       {eng:,.0f} messages/s ({n:,} in {eng_s:.2f} s)")
print(f"P2 ratio:                                      {eng / ref:.2f}")
print(f"P2 server peak RSS:                            {int(eng_rss) / 1024:.1f} MB")
fail = []
if eng / ref < 0.5:
    fail.append("P2 below 0.5 of smtp-source")
if big:
    print(f"P8 {big:,} messages: {big / big_s:,.0f} messages/s, peak RSS {int(big_rss) / 1024:.1f} MB")
    if int(big_rss) / 1024 >= 57:
        fail.append("P8 peak RSS not under 57 MB")
if fail and enforce == "1":
    sys.exit("; ".join(fail))
PY
