#!/usr/bin/env bash
# Starts the mail peers the outbound crate's tests connect to, on loopback
# ports that host/core/src/testing.rs (`mail_peers`) hard-codes:
#
#   127.0.0.1:12525  Postfix's smtp-sink: announces AUTH, accepts any login
#                    and discards every message.
#   127.0.0.1:11143  a private Dovecot, plaintext IMAP (no TLS), the user
#                    seller@outreach.test / mail-pass-1 with an empty INBOX, and
#                    any other user with the password inbox-pass-1 (the inbox
#                    tests give each test its own mailbox this way). A
#                    mailbox named Junk is marked \Junk (SPECIAL-USE).
#
# Idempotent: a peer that already answers is reused, so running this before
# every test run costs nothing. Installs postfix and dovecot-imapd from
# Debian's packages when they are missing. Everything the peers write lives
# under $OUTREACH_MAIL_DIR (default /tmp/outreach-mail).
set -euo pipefail
dir="${OUTREACH_MAIL_DIR:-/tmp/outreach-mail}"
smtp_port=12525
imap_port=11143
user=seller@outreach.test
password=mail-pass-1

missing=()
command -v smtp-sink >/dev/null 2>&1 || missing+=(postfix)
command -v dovecot >/dev/null 2>&1 || missing+=(dovecot-imapd)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Bash's /dev/tcp gives a dependency-free "does something answer" probe.
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() {
    local name=$1 port=$2 log=$3
    for _ in $(seq 1 50); do
        answers "$port" && return 0
        sleep 0.1
    done
    echo "$name did not start on 127.0.0.1:$port; its log ($log):" >&2
    cat "$log" >&2 || true
    exit 1
}

mkdir -p "$dir"

# smtp-sink stays in the foreground, so setsid detaches it from this shell and
# from the test run that called us; as root it must drop to an unprivileged user.
if ! answers "$smtp_port"; then
    setsid smtp-sink -u nobody "127.0.0.1:$smtp_port" 64 \
        >"$dir/smtp-sink.log" 2>&1 </dev/null &
    wait_for smtp-sink "$smtp_port" "$dir/smtp-sink.log"
fi

# The configuration is compared with the running one's: a Dovecot started
# with an older configuration is stopped and started again.
write_dovecot_conf() {
    cat <<EOF
# Private test instance: its own directories, so it never touches (or needs)
# the machine's Dovecot configuration.
base_dir = $dir/run
state_dir = $dir/state
instance_name = outreach-test
log_path = $dir/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:$dir/mail/%u/Maildir
# A mailbox named Junk is the spam folder (RFC 6154 SPECIAL-USE \\Junk), as
# on most servers; it exists only where a test creates it, so the smart
# warmup tests also meet a mailbox without one and one named Spam.
namespace inbox {
  inbox = yes
  mailbox Junk {
    special_use = \\Junk
  }
}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $dir/users
  result_failure = continue
  result_internalfail = continue
}
# Any other user name logs in with inbox-pass-1 and gets its own Maildir.
passdb {
  driver = static
  args = password=inbox-pass-1
}
userdb {
  driver = static
  args = uid=65534 gid=65534 home=$dir/mail/%u
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = $imap_port
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
EOF
}
if answers "$imap_port" && ! write_dovecot_conf | cmp -s - "$dir/dovecot.conf"; then
    kill "$(cat "$dir/run/master.pid" 2>/dev/null)" 2>/dev/null || true
    for _ in $(seq 1 50); do answers "$imap_port" || break; sleep 0.1; done
fi

if ! answers "$imap_port"; then
    # Mail belongs to uid 65534 because Dovecot refuses uid 0 for mail
    # processes; the Maildir's cur/new/tmp must exist for SELECT INBOX.
    maildir="$dir/mail/$user/Maildir"
    mkdir -p "$maildir/cur" "$maildir/new" "$maildir/tmp" "$dir/run" "$dir/state"
    chown -R 65534:65534 "$dir/mail"
    printf '%s:{PLAIN}%s\n' "$user" "$password" >"$dir/users"
    # Dovecot's default_internal_user (dovecot) must be able to read it.
    chmod 644 "$dir/users"
    write_dovecot_conf >"$dir/dovecot.conf"
    # Without -F Dovecot daemonises itself once its listeners are bound.
    dovecot -c "$dir/dovecot.conf" >"$dir/dovecot.start.log" 2>&1 \
        || { cat "$dir/dovecot.start.log" "$dir/dovecot.log" >&2 2>/dev/null; exit 1; }
    wait_for dovecot "$imap_port" "$dir/dovecot.log"
fi
echo "mail peers: smtp-sink on 127.0.0.1:$smtp_port, Dovecot IMAP on 127.0.0.1:$imap_port ($dir)"
