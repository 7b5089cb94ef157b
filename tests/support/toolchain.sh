#!/usr/bin/env bash
# Makes sure the pinned toolchain (rust-toolchain.toml) and its wasm32-wasip2
# target are installed. rustup installs a toolchain's listed targets only when
# it installs the toolchain itself, so a machine that already had 1.95.0
# (or links it to another toolchain) lacks the target; the plugin runtime's
# build script needs it to build the first-party components.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v rustup >/dev/null 2>&1; then
    echo "rustup not found; assuming the toolchain and wasm32-wasip2 are installed"
    exit 0
fi
toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    echo "installing toolchain $toolchain"
    rustup toolchain install "$toolchain" --profile minimal --component rustfmt,clippy
fi
sysroot=$(rustup run "$toolchain" rustc --print sysroot)
if [ ! -d "$sysroot/lib/rustlib/wasm32-wasip2/lib" ]; then
    echo "adding the wasm32-wasip2 target to $toolchain"
    rustup target add wasm32-wasip2 --toolchain "$toolchain"
fi
# component:binary pairs
for pair in rustfmt:rustfmt clippy:cargo-clippy; do
    if ! rustup run "$toolchain" "${pair#*:}" --version >/dev/null 2>&1; then
        rustup component add "${pair%%:*}" --toolchain "$toolchain"
    fi
done
rustup run "$toolchain" rustc --version
