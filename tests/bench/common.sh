# Shared by the benchmark scripts (source it): wrk, the release binary,
# starting the server, issuing API keys and the key-rotating wrk script.
# The caller sets ROOT and WORK.

# Stops the given processes (empty arguments are skipped) and waits for
# them; the scripts' exit traps call it.
bench_stop() {
    local pid
    for pid in "$@"; do
        [ -n "$pid" ] || continue
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}

# Installs wrk from Debian when it is missing.
bench_wrk() {
    command -v wrk >/dev/null && return
    echo "installing wrk from Debian" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq wrk >/dev/null
}

# Prints a Python venv with pysqlite3-binary (SQLite 3.51; Debian's Python
# links an SQLite too old for some of the schema), creating it once.
bench_pysqlite_venv() {
    local venv="${XDG_CACHE_HOME:-$HOME/.cache}/outreach-bench-venv"
    if ! "$venv/bin/python" -c 'import pysqlite3' 2>/dev/null; then
        python3 -m venv "$venv" >&2
        "$venv/bin/pip" install -q pysqlite3-binary >&2
    fi
    echo "$venv"
}

# Prints the release binary, building it unless OUTREACH_BIN names one.
bench_binary() {
    if [ -n "${OUTREACH_BIN:-}" ]; then
        echo "$OUTREACH_BIN"
    else
        (cd "$ROOT" && cargo build --release -p outreach --bin outreach >&2)
        echo "${CARGO_TARGET_DIR:-$ROOT/target}/release/outreach"
    fi
}

# shellcheck source=../support/server.sh
. "$ROOT/tests/support/server.sh"

# Starts `$BIN serve` in the background; sets SERVER_PID, BASE and METRICS
# (the server's log goes to $WORK/stderr).
bench_start_server() {
    SERVER_LOG="$WORK/stderr" server_start
    # Printed before the "listening on" line server_start waits for.
    METRICS="$(sed -n 's/^metrics on \(http:\/\/.*\)\/metrics$/\1/p' "$WORK/stdout")"
}

# bench_keys EMAIL PASSWORD COUNT FILE: signs in on the dashboard API and
# issues COUNT keys over HTTP (one process, one connection: much faster than
# one CLI process per key), one per line of FILE.
bench_keys() {
    python3 - "$BASE" "$1" "$2" "$3" "$4" <<'PY'
import http.client, json, sys, urllib.parse
base, email, password, count, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
u = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
def call(method, path, body=None, token=None):
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = "Bearer " + token
    conn.request(method, path, json.dumps(body) if body is not None else None, headers)
    r = conn.getresponse()
    data = r.read()
    if r.status >= 300:
        sys.exit(f"{method} {path}: {r.status} {data!r}")
    return json.loads(data)
jwt = call("POST", "/auth/login", {"email": email, "password": password})["access_token"]
with open(out, "w") as f:
    for i in range(count):
        f.write(call("POST", "/auth/api-keys", {"name": f"bench-{i}"}, jwt)["api_key"] + "\n")
PY
}

# Writes $WORK/rotate.lua: every request takes the next key of the file given
# to wrk after `--`; done() prints one RESULT line.
bench_rotate_lua() {
    cat >"$WORK/rotate.lua" <<'LUA'
local keys = {}
local i = 0
function init(args)
    for line in io.lines(args[1]) do
        keys[#keys + 1] = line
    end
    -- Threads start at different places in the list.
    i = math.random(#keys)
end
function request()
    i = i % #keys + 1
    return wrk.format("GET", nil, { ["Authorization"] = "Bearer " .. keys[i] })
end
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d non2xx=%d socket_errors=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
        e.status, e.connect + e.read + e.write + e.timeout))
end
LUA
}
