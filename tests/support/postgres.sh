#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers on 127.0.0.1:5432 for the test suite:
# starts the machine's cluster when it is installed but stopped, installs it
# from Debian's packages when it is missing, and removes databases left behind
# by interrupted test runs.
set -euo pipefail
url="${OUTREACH_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"

ready() { psql "$url" -Atqc 'SELECT 1' >/dev/null 2>&1; }

if ! ready; then
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        # Trust local TCP connections, as the tests connect without a password.
        hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -n1)
        sed -i -E 's/^(host\s+all\s+all\s+127\.0\.0\.1\/32\s+)\S+/\1trust/' "$hba"
    fi
    version=$(ls /etc/postgresql | head -n1)
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    for _ in $(seq 1 30); do ready && break; sleep 1; done
    ready || { echo "PostgreSQL did not start" >&2; exit 1; }
fi

# Leftovers from killed runs (each test creates outreach_t_<uuid>).
psql "$url" -Atqc "SELECT datname FROM pg_database WHERE datname LIKE 'outreach_t_%'" |
while read -r db; do
    [ -n "$db" ] && psql "$url" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null || true
done
