#!/usr/bin/env bash
# Writes tokenizer/testdata/components/graphemes-ref.json: how the reference
# (tokenizers 0.22.2, whose unicode-segmentation is newer than rivo/uniseg's
# Unicode 15.0) clusters "a" + c for every code point c, and c + "a" for the
# characters Python's Unicode 14 tables lack. Its Precompiled normalizer is
# the only place it clusters; a charsmap that maps "a" (and each such c) is
# compiled by spm_train from a rule TSV, and a cluster under 6 bytes that
# starts with a mapped character is replaced whole, so a joined pair comes
# out as the mapping alone. Needs spm_train, python3, Go and node.
set -euo pipefail
# The Makefile's toolchain: its unicode tables (17.0) name the characters
# Python's lack.
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/assigned.go" <<'GO'
package main

import (
	"fmt"
	"unicode"
)

func main() {
	for c := rune(0); c <= 0x10FFFF; c++ {
		if unicode.In(c, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf) {
			fmt.Println(c)
		}
	}
}
GO
(cd "$tmp" && go run assigned.go > assigned.txt)
/usr/bin/python3 - "$tmp" <<'PY'
import random, sys, unicodedata
tmp = sys.argv[1]
new = [int(l) for l in open(f"{tmp}/assigned.txt") if unicodedata.category(chr(int(l))) == "Cn"]
with open(f"{tmp}/rule.tsv", "w") as f:
    f.write("61\t62\n")
    for c in new:
        f.write("%X\t78\n" % c)
open(f"{tmp}/new.txt", "w").write("\n".join(map(str, new)))
r = random.Random(1)
open(f"{tmp}/in.txt", "w").write("\n".join("".join(r.choice("abcdefgh ") for _ in range(40)) for _ in range(200)))
PY
(cd "$tmp" && spm_train --input=in.txt --model_prefix=g --vocab_size=20 --model_type=char --normalization_rule_tsv=rule.tsv >/dev/null 2>&1)
/usr/bin/python3 - "$tmp" "$here/../unigram" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import build
_, cm = build.read_model(f"{sys.argv[1]}/g.model")
open(f"{sys.argv[1]}/charsmap.bin", "wb").write(cm)
PY
node "$here/graphemes.js" "$tmp/charsmap.bin" "$tmp/new.txt" "$repo/tokenizer/testdata/components/graphemes-ref.json"
