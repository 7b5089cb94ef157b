#!/usr/bin/env bash
# Technology detection side by side with Wappalyzer's reference JavaScript
# engine (wappalyzer-core 6.10.54, MIT, pinned in package.json), both on the
# fingerprint files in host/domain-analysis/data/wappalyzer/ and on the same
# saved pages with headers and cookies.
#
#   tests/bench/wappalyzer/run.sh [PAGES_DIR]
#
# PAGES_DIR defaults to $HOME/.cache/outreach-wappalyzer-pages; the 500-page
# corpus is generated there (generate.js, seeded) when missing or made by
# another version of the generator. PASSES (default 3) sets how often each
# side runs over all pages; the figures are the fastest pass, the first pass
# is printed too. SEED and PAGES change the corpus.
#
# Prints: pages, technologies found by the reference and by us, agreement
# |ours ∩ theirs| / |theirs| (target at least 0.95), extras and misses per
# technology, whether both sides had the same inputs, pages/s each and the
# ratio (target at least 20x). The raw JSON lines stay in OUT_DIR (default:
# a temporary folder, printed at the end).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
pages_dir=${1:-${WAPPALYZER_PAGES:-$HOME/.cache/outreach-wappalyzer-pages}}
passes=${PASSES:-3}
seed=${SEED:-20261125}
count=${PAGES:-500}
out=${OUT_DIR:-$(mktemp -d -t outreach-wappalyzer.XXXXXX)}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/outreach-domain-analysis}

echo "== npm ci (wappalyzer-core, htmlparser2, regjsparser as pinned)" >&2
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)

stamp="generator $(sha256sum "$here/generate.js" | cut -c1-16) seed $seed pages $count"
if [[ ! -f "$pages_dir/CORPUS" || "$(cat "$pages_dir/CORPUS")" != "$stamp" ]]; then
  echo "== generating $count pages in $pages_dir" >&2
  node "$here/generate.js" --out "$pages_dir" --pages "$count" --seed "$seed" >&2
  echo "$stamp" >"$pages_dir/CORPUS"
fi

echo "== building the Rust side (release)" >&2
(cd "$root" && cargo build --release --example detect_pages -p outreach-domain-analysis >&2)

echo "== ours: detect_pages, $passes passes" >&2
(cd "$root" && cargo run --quiet --release --example detect_pages -p outreach-domain-analysis -- \
  "$pages_dir" --passes "$passes" --inputs) >"$out/ours.jsonl"

echo "== reference: wappalyzer-core, $passes passes" >&2
node "$here/reference.js" "$pages_dir" --passes "$passes" --inputs >"$out/theirs.jsonl"

echo "== corpus: $(cat "$pages_dir/CORPUS") in $pages_dir"
node "$here/compare.js" "$out/ours.jsonl" "$out/theirs.jsonl" "$pages_dir"
echo "(JSON lines: $out/ours.jsonl, $out/theirs.jsonl)"
