package tokenizer

import (
	"path/filepath"
	"testing"
)

// FuzzPipelinePair: on any two texts and length, the Unigram and WordPiece
// tokenizers never panic, a pair fits maxLen with one type id per id, and
// plain encoding is deterministic. Seeded from the golden corpora. (Parity
// with the reference on fuzzed input needs the reference: diff.js in
// scripts/tokenizer/components and TestComponentsDiff.)
func FuzzPipelinePair(f *testing.F) {
	var toks []*Tokenizer
	for _, p := range []string{"unigram/xlmr-current.json", "unigram/xlmr-older.json", "wordpiece/bert-uncased.json", "wordpiece/bert-cased.json"} {
		tk, err := Load(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		toks = append(toks, tk)
	}
	cases := readJSONL[unigramCase](f, filepath.Join("testdata", "wordpiece", "corpus.jsonl"))
	for i := 0; i+1 < len(cases); i += 7 {
		f.Add(cases[i].Text, cases[i+1].Text, uint8(i))
	}
	f.Fuzz(func(t *testing.T, a, b string, n uint8) {
		for _, tk := range toks {
			maxLen := int(n)
			e, err := tk.EncodePair(a, b, maxLen)
			if err != nil {
				if maxLen >= 4 {
					t.Fatalf("EncodePair(%q, %q, %d): %v", a, b, maxLen, err)
				}
				continue
			}
			if maxLen > 0 && len(e.IDs) > maxLen || len(e.TypeIDs) != len(e.IDs) || e.AttentionLen != len(e.IDs) {
				t.Fatalf("EncodePair(%q, %q, %d): %d ids, %d type ids, attention %d", a, b, maxLen, len(e.IDs), len(e.TypeIDs), e.AttentionLen)
			}
			x, y := tk.EncodeIDs(a), tk.EncodeIDs(a)
			if len(x) != len(y) {
				t.Fatalf("EncodeIDs(%q) not deterministic", a)
			}
			if _, err := tk.Decode(x, true); err != nil {
				t.Fatalf("Decode: %v", err)
			}
		}
	})
}
