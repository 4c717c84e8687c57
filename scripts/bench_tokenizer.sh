#!/usr/bin/env bash
# Tokens/s of our tokenizer vs the Rust Hugging Face tokenizers (0.22.2, via
# its Node binding) on the same corpus (tokenizer/testdata/golden.jsonl), both
# pinned to one core, measured in this run. Prints one JSON object with both
# rates and the ratio. Needs node + npm the first time (the reference is
# installed into the cache by scripts/tokenizer/regen_golden.sh's helper).
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${REPS:-10}"
CACHE="${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}"
REF_DIR="${RERANKD_HF_TOKENIZERS_DIR:-$CACHE/tools/hf-tokenizers-0.6.0}"
if [ ! -d "$REF_DIR/node_modules/@anush008/tokenizers" ]; then
  npm install --silent --prefix "$REF_DIR" @anush008/tokenizers@0.6.0 >&2
fi
core=0
ours=$(GOMAXPROCS=1 taskset -c $core go test ./tokenizer -run '^$' -bench 'BenchmarkEncode_Corpus$' \
  -benchtime "${REPS}x" -cpu 1 -count 3 | awk '/tokens\/s/ { for (i=1;i<=NF;i++) if ($(i+1)=="tokens/s") print $i }' | sort -g | tail -1)
ref=$(RAYON_NUM_THREADS=1 taskset -c $core node scripts/tokenizer/bench_ref.js "$REPS")
ref_tps=$(node -e 'console.log(JSON.parse(process.argv[1]).tokens_per_s)' "$ref")
node -e '
const ours = Number(process.argv[1]), ref = JSON.parse(process.argv[2]);
console.log(JSON.stringify({ours_tokens_per_s: Math.round(ours), reference_tokens_per_s: ref.tokens_per_s,
  reference_mode: ref.mode, ratio: +(ours / ref.tokens_per_s).toFixed(2), corpus_strings: ref.strings,
  corpus_tokens: ref.tokens, note: "best of 3 Go runs vs best reference pass, one core each"}));' "$ours" "$ref"
