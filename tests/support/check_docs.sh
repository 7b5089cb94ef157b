#!/usr/bin/env bash
# Checks that ARCHITECTURE.md stays a map a newcomer reads in minutes and
# that the per-area decision files it points to stay in step with it:
#
#   (a) every docs/decisions/*.md link in ARCHITECTURE.md names a file;
#   (b) every file in docs/decisions/ is linked from ARCHITECTURE.md;
#   (c) ARCHITECTURE.md is below 28 KB.
#
# Run from anywhere; exits 1 with one line per problem.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
arch=ARCHITECTURE.md
max_bytes=$((28 * 1024))
status=0

# (a) Links as written in the markdown: (docs/decisions/<name>.md), with an
# optional #anchor.
linked="$(grep -o '(docs/decisions/[^)#]*\.md\(#[^)]*\)\?)' "$arch" \
    | sed -e 's/^(//' -e 's/)$//' -e 's/#.*$//' | sort -u || true)"
if [ -z "$linked" ]; then
    echo "$arch: no links to docs/decisions/" >&2
    status=1
fi
while IFS= read -r path; do
    [ -z "$path" ] && continue
    if [ ! -f "$path" ]; then
        echo "$arch: link to $path, which does not exist" >&2
        status=1
    fi
done <<< "$linked"

# (b) Every decision file is linked.
for file in docs/decisions/*.md; do
    [ -e "$file" ] || continue
    if ! grep -qxF "$file" <<< "$linked"; then
        echo "$arch: $file is not linked" >&2
        status=1
    fi
done

# (c) Size.
bytes=$(wc -c < "$arch")
if [ "$bytes" -ge "$max_bytes" ]; then
    echo "$arch: $bytes bytes, the limit is $max_bytes" >&2
    status=1
fi

if [ "$status" -eq 0 ]; then
    echo "docs ok: $arch $bytes bytes, $(wc -l <<< "$linked") decision files linked"
fi
exit "$status"
