#!/usr/bin/env bash
# Regenerates tokenizer/testdata/unigram and testdata/wordpiece: trains a SentencePiece Unigram
# model (spm_train, nmt_nfkc), writes it as XLM-R tokenizer.json files in the
# three normalizer forms of the hub (build.py, with SentencePiece's own ids
# for the test strings), then the Rust HF reference's encodings (golden.js).
# Needs Debian sentencepiece + python3-sentencepiece and node with the
# reference installed by ../regen_golden.sh. CI does not run this.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$(cd "$here/../../.." && pwd)/tokenizer/testdata/unigram"
command -v spm_train >/dev/null || { echo "spm_train not found (apt-get install sentencepiece python3-sentencepiece)" >&2; exit 1; }
/usr/bin/python3 "$here/build.py" "$out"
node "$here/golden.js" "$out"
# WordPiece (BERT layout, cased and uncased) from the same corpus.
wp="$(dirname "$out")/wordpiece"
/usr/bin/python3 "$here/wordpiece.py" "$wp"
node "$here/golden.js" "$wp"
