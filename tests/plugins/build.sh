#!/usr/bin/env bash
# Builds the Python and JavaScript test plugins into OUT_DIR (default
# tests/plugins/.build-cache), skipping a build whose sources, WIT and
# toolchain versions have not changed (cache key: sha256 of all of them).
# Prints the two .wasm paths. Run setup.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/.build-cache}"
mkdir -p "$out"

key() { # files... -> hash
    (cat "$@"; cat "$root"/wit/*.wit; "$here/.venv/bin/componentize-py" --version; \
     cat "$here/js/node_modules/@bytecodealliance/componentize-js/package.json") | sha256sum | cut -c1-16
}

py_key=$(key "$here/python/app.py")
py_out="$out/py-verifier-$py_key.wasm"
if [ ! -f "$py_out" ]; then
    "$here/.venv/bin/componentize-py" -d "$root/wit" -w email-verifier componentize \
        -p "$here/python" app -o "$py_out.tmp" >&2
    mv "$py_out.tmp" "$py_out"
fi

js_key=$(key "$here/js/verifier.js" "$here/js/build.mjs")
js_out="$out/js-verifier-$js_key.wasm"
if [ ! -f "$js_out" ]; then
    (cd "$here/js" && node build.mjs "$js_out.tmp" >&2)
    mv "$js_out.tmp" "$js_out"
fi
echo "$py_out"
echo "$js_out"
