#!/usr/bin/env bash
# Regenerates tokenizer/testdata/golden.jsonl from the reference Rust HF
# tokenizers (Node binding @anush008/tokenizers@0.6.0 = tokenizers 0.22.2).
# Needs node + npm (registry access on first run only). CI does not run this:
# golden.jsonl is committed.
#
# Env: RERANKD_CACHE, RERANKD_TOKENIZER, RERANKD_HF_TOKENIZERS_DIR (see ref.js).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

ref_pkg="@anush008/tokenizers"
ref_ver="0.6.0"
cache="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
prefix="${RERANKD_HF_TOKENIZERS_DIR:-$cache/tools/hf-tokenizers-$ref_ver}"
tok="${RERANKD_TOKENIZER:-$cache/tokenizers/qwen3/tokenizer.json}"

command -v node >/dev/null || { echo "node not found" >&2; exit 1; }

if [[ ! -f "$tok" ]]; then
  echo "tokenizer.json not found at $tok (set RERANKD_TOKENIZER)" >&2
  exit 1
fi

installed_ver=""
if [[ -f "$prefix/node_modules/$ref_pkg/package.json" ]]; then
  installed_ver="$(node -p "require('$prefix/node_modules/$ref_pkg/package.json').version")"
fi
if [[ "$installed_ver" != "$ref_ver" ]]; then
  command -v npm >/dev/null || { echo "npm not found (needed once to install $ref_pkg@$ref_ver)" >&2; exit 1; }
  echo "installing $ref_pkg@$ref_ver into $prefix" >&2
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --save-exact "$ref_pkg@$ref_ver" >&2
fi

export RERANKD_HF_TOKENIZERS_DIR="$prefix"
export RERANKD_TOKENIZER="$tok"
export TOKENIZERS_PARALLELISM=false
cd "$repo"
node "$here/golden.js" "${1:-$repo/tokenizer/testdata/golden.jsonl}"
