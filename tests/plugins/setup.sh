#!/usr/bin/env bash
# Installs the toolchains that build the Python and JavaScript test plugins.
# Idempotent: re-running only checks that everything is in place.
#   componentize-py 0.25 (PyPI) into tests/plugins/.venv
#   @bytecodealliance/jco + componentize-js (npm) into tests/plugins/js/node_modules
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if ! "$here/.venv/bin/componentize-py" --version >/dev/null 2>&1; then
    python3 -m venv "$here/.venv"
    "$here/.venv/bin/pip" install --quiet 'componentize-py==0.25.*'
fi
"$here/.venv/bin/componentize-py" --version

if [ ! -d "$here/js/node_modules/@bytecodealliance/componentize-js" ] \
    || [ ! -d "$here/js/node_modules/@bytecodealliance/preview2-shim" ]; then
    (cd "$here/js" && npm install --no-audit --no-fund --silent)
fi
node -e "console.log('componentize-js', require('$here/js/node_modules/@bytecodealliance/componentize-js/package.json').version)"
