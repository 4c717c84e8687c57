package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// withComponents is the trained Unigram file with its normalizer,
// pre-tokenizer and decoder replaced by the given JSON (empty: left out).
func withComponents(tb testing.TB, normalizer, pre, decoder string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "unigram", "xlmr-current.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		tb.Fatal(err)
	}
	for k, v := range map[string]string{"normalizer": normalizer, "pre_tokenizer": pre, "decoder": decoder} {
		if v == "" {
			v = "null"
		}
		f[k] = json.RawMessage(v)
	}
	out, err := json.Marshal(f)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestComponentsRefused: what cannot be reproduced exactly is refused at
// load with an error naming the component and the field.
func TestComponentsRefused(t *testing.T) {
	ms := `{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}`
	tests := []struct {
		name, normalizer, pre, decoder, want string
	}{
		{"Nmt normalizer", `{"type":"Nmt"}`, ms, "", `normalizer: type "Nmt" is not supported`},
		{"ByteLevel normalizer in a Sequence", `{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"ByteLevel"}]}`, ms, "", `normalizer.normalizers[1]: type "ByteLevel"`},
		{"Strip without its fields", `{"type":"Strip","left":true}`, ms, "", "Strip needs strip_left and strip_right"},
		{"Replace with \\s", `{"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "}`, ms, "", `escape \s is not supported`},
		{"Replace matching empty", `{"type":"Replace","pattern":{"Regex":"a*"},"content":" "}`, ms, "", "matches the empty string"},
		{"Prepend without text", `{"type":"Prepend"}`, ms, "", "Prepend without prepend"},
		{"ByteLevel pre-tokenizer", "", `{"type":"ByteLevel","add_prefix_space":false}`, "", `pre_tokenizer: type "ByteLevel" is not supported`},
		{"UnicodeScripts", "", `{"type":"Sequence","pretokenizers":[` + ms + `,{"type":"UnicodeScripts"}]}`, "", `pre_tokenizer.pretokenizers[1]: type "UnicodeScripts"`},
		{"Split with lookahead", "", `{"type":"Split","pattern":{"Regex":"\\s+(?!\\S)"},"behavior":"Removed","invert":false}`, "", "Split pattern"},
		{"Split with \\p", "", `{"type":"Split","pattern":{"Regex":"\\p{L}+"},"behavior":"Removed","invert":false}`, "", `escape \p is not supported`},
		{"Split with anchors", "", `{"type":"Split","pattern":{"Regex":"^a"},"behavior":"Removed","invert":false}`, "", "anchors"},
		{"Split with flags", "", `{"type":"Split","pattern":{"Regex":"(?i)a"},"behavior":"Removed","invert":false}`, "", "only (?:...) groups"},
		{"Split with {,n}", "", `{"type":"Split","pattern":{"Regex":"a{,2}"},"behavior":"Removed","invert":false}`, "", "{,n}"},
		{"Split with a nested class", "", `{"type":"Split","pattern":{"Regex":"[a[b]]"},"behavior":"Removed","invert":false}`, "", "nested classes"},
		{"Split empty string", "", `{"type":"Split","pattern":{"String":""},"behavior":"Removed","invert":false}`, "", "empty String pattern"},
		{"Split bad behavior", "", `{"type":"Split","pattern":{"String":"a"},"behavior":"Merged","invert":false}`, "", `behavior "Merged"`},
		{"Split without invert", "", `{"type":"Split","pattern":{"String":"a"},"behavior":"Removed"}`, "", "Split needs pattern, behavior and invert"},
		{"Metaspace first after a split", "", `{"type":"Sequence","pretokenizers":[{"type":"WhitespaceSplit"},{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}]}`, "", `"first" after another pre-tokenizer`},
		{"Metaspace two-character replacement", "", `{"type":"Metaspace","replacement":"__","prepend_scheme":"always","split":true}`, "", "not one character"},
		{"Metaspace contradiction", "", `{"type":"Metaspace","replacement":"▁","add_prefix_space":false,"prepend_scheme":"always","split":true}`, "", "contradicts"},
		{"Digits without individual_digits", "", `{"type":"Digits"}`, "", "Digits needs individual_digits"},
		{"WordPiece decoder without cleanup", "", ms, `{"type":"WordPiece","prefix":"##"}`, "WordPiece needs prefix and cleanup"},
		{"Strip decoder with stop", "", ms, `{"type":"Strip","content":" ","start":1,"stop":1}`, `decoder: Strip with stop 1 is not supported`},
		{"Replace decoder with \\s", "", ms, `{"type":"Replace","pattern":{"Regex":"\\s"},"content":" "}`, `decoder: Replace: escape \s`},
		{"CTC decoder in a Sequence", "", ms, `{"type":"Sequence","decoders":[{"type":"ByteFallback"},{"type":"CTC"}]}`, `decoder.decoders[1]: type "CTC"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromBytes(withComponents(t, tc.normalizer, tc.pre, tc.decoder), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestSplitBehaviors: the five behaviors, with and without invert, worked
// by hand from the reference's NormalizedString::split (the golden files
// check them against the reference itself).
func TestSplitBehaviors(t *testing.T) {
	tests := []struct {
		behavior splitBehavior
		invert   bool
		want     []string
	}{
		{splitRemoved, false, []string{"The", "quick", "fox"}},
		{splitIsolated, false, []string{"The", "-", "quick", "-", "-", "fox"}},
		{splitMergedWithPrevious, false, []string{"The-", "quick-", "-", "fox"}},
		{splitMergedWithNext, false, []string{"The", "-quick", "-", "-fox"}},
		{splitContiguous, false, []string{"The", "-", "quick", "--", "fox"}},
		{splitRemoved, true, []string{"-", "-", "-"}},
		{splitMergedWithNext, true, []string{"The-", "quick-", "-", "fox"}},
	}
	const s = "The-quick--fox"
	for _, tc := range tests {
		got := cut(s, charMatches(s, func(r rune) bool { return r == '-' }, nil), tc.behavior, tc.invert, nil)
		if !slices.Equal(got, tc.want) {
			t.Errorf("behavior %d invert %v: %q, want %q", tc.behavior, tc.invert, got, tc.want)
		}
	}
}
