package tokenizer

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// componentCase is one line of testdata/components/golden-*.jsonl, written
// by the reference through scripts/tokenizer/components/golden.js.
type componentCase struct {
	Text       string   `json:"text"`
	IDs        []int    `json:"ids"`
	Special    []int    `json:"special"`
	Decoded    string   `json:"decoded"`
	Normalized string   `json:"normalized"`
	Pre        []string `json:"pre"`
}

// componentFiles lists the configurations of testdata/components.
func componentFiles(tb testing.TB) []string {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "components", "golden-*.jsonl"))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no component golden files: %v", err)
	}
	for i, n := range names {
		names[i] = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "golden-"), ".jsonl")
	}
	return names
}

// TestComponentsGolden: for every component configuration, the normalized
// text, the pre-tokenized pieces, the ids without and with special tokens
// and the decoded text equal the reference's.
func TestComponentsGolden(t *testing.T) {
	for _, name := range componentFiles(t) {
		t.Run(name, func(t *testing.T) {
			tk, err := Load(filepath.Join("testdata", "components", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			cases := readJSONL[componentCase](t, filepath.Join("testdata", "components", "golden-"+name+".jsonl"))
			bad := 0
			fail := func(format string, a ...any) {
				bad++
				if bad <= 8 {
					t.Errorf(format, a...)
				}
			}
			for i, c := range cases {
				text := validUTF8(c.Text)
				norm := tk.pipe.normalize(text)
				if norm != c.Normalized {
					fail("line %d %q: normalized %q, want %q", i+1, c.Text, norm, c.Normalized)
				}
				if c.Pre != nil {
					if got := tk.pipe.preTokenize(c.Normalized, true, nil); !slices.Equal(got, c.Pre) {
						fail("line %d %q: pieces %q, want %q", i+1, c.Normalized, got, c.Pre)
					}
				}
				if got := tk.EncodeIDs(c.Text); !slices.Equal(got, c.IDs) {
					fail("line %d %q:\n got %v\nwant %v", i+1, c.Text, got, c.IDs)
				}
				if e, err := tk.EncodeSingle(c.Text, 0); err != nil || !slices.Equal(e.IDs, c.Special) {
					fail("line %d %q with special tokens: got %v (%v), want %v", i+1, c.Text, e.IDs, err, c.Special)
				}
				if dec, err := tk.Decode(c.IDs, false); err != nil || dec != c.Decoded {
					fail("line %d decode %v: got %q (%v), want %q", i+1, c.IDs, dec, err, c.Decoded)
				}
			}
			if len(cases) < 200 {
				t.Fatalf("%d cases, want >= 200", len(cases))
			}
			t.Logf("%d strings, %d mismatches", len(cases), bad)
		})
	}
}
