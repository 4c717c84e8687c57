package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

// TestPieceTrie: common-prefix search and lookup give the last id of a
// repeated piece, across branch nodes, tails and a one-piece vocabulary.
func TestPieceTrie(t *testing.T) {
	tests := []struct {
		name   string
		pieces []string
		query  string
		want   [][2]int // (length, id) of each prefix piece
		lookup map[string]int
	}{
		{"tails and branches", []string{"a", "abc", "abd", "b", "abcdef"}, "abcdefg",
			[][2]int{{1, 0}, {3, 1}, {6, 4}}, map[string]int{"abd": 2, "ab": -1, "abcdefg": -1, "b": 3}},
		{"repeated piece keeps the last id", []string{"x", "xy", "x", "xy"}, "xyz",
			[][2]int{{1, 2}, {2, 3}}, map[string]int{"x": 2, "xy": 3}},
		{"one piece", []string{"hello"}, "hello world", [][2]int{{5, 0}}, map[string]int{"hell": -1, "hello": 0}},
		{"multibyte", []string{"▁", "▁a", "▁ab", "né"}, "▁abc", [][2]int{{3, 0}, {4, 1}, {5, 2}},
			map[string]int{"né": 3, "n": -1}},
		{"empty piece", []string{"", "a"}, "a", [][2]int{{1, 1}}, map[string]int{"": 0}},
		{"no match", []string{"abc"}, "abd", nil, map[string]int{"abd": -1, "abcd": -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newPieceTrie(tc.pieces)
			var got [][2]int
			tr.prefixes(tc.query, func(n int, id int32) { got = append(got, [2]int{n, int(id)}) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("prefixes(%q) = %v, want %v", tc.query, got, tc.want)
			}
			for s, want := range tc.lookup {
				id, ok := tr.lookup(s)
				if (want >= 0) != ok || ok && id != want {
					t.Errorf("lookup(%q) = %d, %v; want %d", s, id, ok, want)
				}
			}
		})
	}
}

// TestReadUnigramVocab: the scanner reads what a JSON parser reads and
// refuses what it refuses, naming the entry.
func TestReadUnigramVocab(t *testing.T) {
	tests := []struct {
		raw    string
		pieces []string
		scores []float64
		err    string
	}{
		{` [ ["a", -1.5] , ["\u00e9\n", 0],["", 1e-3]] `, []string{"a", "é\n", ""}, []float64{-1.5, 0, 0.001}, ""},
		{`[]`, []string{}, []float64{}, ""},
		{`[["a", 1], ["b", -0]]`, []string{"a", "b"}, []float64{1, 0}, ""},
		{`[["\ud800", 1]]`, nil, nil, "entry 0: piece"},
		{"[[\"a\xff\", 1]]", nil, nil, "invalid UTF-8"},
		{"[[\"a\tb\", 1]]", nil, nil, "control character"},
		{`[["a", inf]]`, nil, nil, "not a number"},
		{`[["a", 01]]`, nil, nil, "want ] after the score"},
		{`[["a", 1.]]`, nil, nil, "no digits after the point"},
		{`[["a", 1e400]]`, nil, nil, "out of range"},
		{`[["a", 1],]`, nil, nil, "entry 1: not a [piece, score] array"},
		{`[["a", 1]] x`, nil, nil, "unexpected data"},
		{`[["a" 1]]`, nil, nil, "want a score"},
		{`{"a": 1}`, nil, nil, "not an array"},
		{`[["a\"b\\c", 2]]`, []string{`a"b\c`}, []float64{2}, ""},
	}
	for _, tc := range tests {
		pieces, scores, err := readUnigramVocab([]byte(tc.raw))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(pieces, tc.pieces) || !slices.Equal(scores, tc.scores) {
			t.Errorf("%s: got %q %v (%v), want %q %v", tc.raw, pieces, scores, err, tc.pieces, tc.scores)
		}
	}
}

// TestParsePipeFileVocab: the vocabulary read ahead of the rest of the file
// gives what one full parse gives: the last of repeated vocab keys, and the
// full parse's error for a bad entry.
func TestParsePipeFileVocab(t *testing.T) {
	const head = `{"added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":{"type":"Unigram","unk_id":0,`
	tests := []struct {
		name, model string
		has, lacks  string
		err         string
	}{
		{"one vocab", `"vocab": [["<unk>", 0], ["ab", -1]]}}`, "ab", "b", ""},
		{"repeated vocab key", `"vocab":[["<unk>",0],["a",-1]],"vocab":[["<unk>",0],["b",-1]]}}`, "b", "a", ""},
		{"vocab then fields", `"vocab":[["<unk>",0],["x",-1]],"byte_fallback":false}}`, "x", "y", ""},
		{"bad entry", `"vocab":[["<unk>",0],["a","-1"]]}}`, "", "", "model.vocab"},
		{"bad JSON after the vocab", `"vocab":[["<unk>",0]],}}`, "", "", "parse tokenizer.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk, err := FromBytes([]byte(head+tc.model), nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := tk.TokenID(tc.has); !ok {
				t.Errorf("%q missing", tc.has)
			}
			if _, ok := tk.TokenID(tc.lacks); ok {
				t.Errorf("%q present", tc.lacks)
			}
		})
	}
}
