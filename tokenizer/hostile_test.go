package tokenizer

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestHostileNormalizerGrowth: a chain of Replace steps that multiplies a
// text's length (six "a" → "a"×1000: 10^18 times) is refused at load,
// not met at the first request as an allocation of terabytes; a real
// tokenizer's growth (" " → "▁", 3x) loads.
func TestHostileNormalizerGrowth(t *testing.T) {
	ms := `{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`
	step := `{"type":"Replace","pattern":{"String":"a"},"content":"` + strings.Repeat("a", 1000) + `"}`
	chain := `{"type":"Sequence","normalizers":[` + strings.Join(slices.Repeat([]string{step}, 6), ",") + `]}`
	for _, tc := range []struct {
		name, normalizer, want string
	}{
		{"six Replace a -> a x1000", chain, "can make a text 1e+18x longer"},
		{"one Replace regex to 300 bytes", `{"type":"Replace","pattern":{"Regex":"a"},"content":"` + strings.Repeat("b", 300) + `"}`, "longer (at most 256 allowed)"},
		{"space to metaspace", `{"type":"Replace","pattern":{"String":" "},"content":"▁"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromBytes(withComponents(t, tc.normalizer, ms, ""), nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// wordPieceJSON is a three-piece WordPiece tokenizer with the given
// max_input_chars_per_word.
func wordPieceJSON(maxChars string) []byte {
	return []byte(`{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"BertPreTokenizer"},"post_processor":null,"decoder":null,` +
		`"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":` + maxChars +
		`,"vocab":{"[UNK]":0,"a":1,"##a":2,"##aa":3}}}`)
}

// TestWordPieceLongWord: max_input_chars_per_word of 10^12 lets a
// 20,000-letter word through to the greedy search, which tries no part
// longer than the vocabulary's longest piece (n×4 lookups here, not n²/2
// = 2×10^8); the pieces are the reference's greedy longest-match-first.
func TestWordPieceLongWord(t *testing.T) {
	tok, err := FromBytes(wordPieceJSON("1000000000000"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.EncodeIDs(strings.Repeat("a", 20_001))
	want := append([]int{1}, slices.Repeat([]int{3}, 10_000)...)
	if !slices.Equal(ids, want) {
		t.Fatalf("%d ids, first %v; want a then 10,000 ##aa", len(ids), ids[:min(5, len(ids))])
	}
	if _, err := FromBytes(wordPieceJSON("0"), nil); err == nil || !strings.Contains(err.Error(), "max_input_chars_per_word 0") {
		t.Fatalf("max_input_chars_per_word 0: %v", err)
	}
}

// TestUnigramWithoutUnk: a Unigram model with no unk_id and no byte
// fallback cannot encode "é" or "中" when its vocabulary lacks them; it is
// refused at load with the cause, not met as a failed request.
func TestUnigramWithoutUnk(t *testing.T) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(withComponents(t, "", `{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`, ""), &f); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(f["model"], &m); err != nil {
		t.Fatal(err)
	}
	m["unk_id"], m["byte_fallback"] = json.RawMessage("null"), json.RawMessage("false")
	f["model"], _ = json.Marshal(m)
	data, _ := json.Marshal(f)
	if _, err := FromBytes(data, nil); err == nil || !strings.Contains(err.Error(), "model.unk_id is null") {
		t.Fatalf("error %v, want the missing unk_id named", err)
	}
}
