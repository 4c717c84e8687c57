package tokenizer

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// sameTables reports how two loads of one file differ (nil when they do not).
func sameTables(a, b *Tokenizer) []string {
	var diffs []string
	if !maps.Equal(a.vocab, b.vocab) {
		diffs = append(diffs, "vocab")
	}
	if !maps.Equal(a.merges, b.merges) {
		diffs = append(diffs, "merges")
	}
	if !slices.Equal(a.tokens, b.tokens) {
		diffs = append(diffs, "tokens")
	}
	if !slices.Equal(a.added, b.added) {
		diffs = append(diffs, "added tokens")
	}
	if a.byteID != b.byteID || a.ignoreMerges != b.ignoreMerges || a.pad != b.pad || a.eos != b.eos || a.bos != b.bos {
		diffs = append(diffs, "byte ids, ignore_merges or special tokens")
	}
	return diffs
}

// TestParseMatchesReference: the streaming parser builds exactly the tables
// the previous encoding/json + sugarme loader built, on the real Qwen3 file
// and on small files in both merge notations.
func TestParseMatchesReference(t *testing.T) {
	dir := qwenPath()
	real, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatalf("Qwen3 tokenizer not available (run scripts/setup.sh): %v", err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, ConfigFileName))
	stringMerges := func(m map[string]any) {
		model := m["model"].(map[string]any)
		var lines []any
		for _, p := range model["merges"].([]any) {
			lines = append(lines, strings.Join(p.([]string), " "))
		}
		model["merges"] = lines
		model["ignore_merges"] = true
	}
	merges := [][2]string{{"a", "b"}, {"ab", "c"}, {"Ġ", "x"}}
	repeat := func(m map[string]any) { // a repeated pair keeps its last rank
		model := m["model"].(map[string]any)
		model["merges"] = append(model["merges"].([]any), []string{"a", "b"})
	}
	cases := []struct {
		name      string
		data, cfg []byte
	}{
		{"qwen3", real, cfg},
		{"pairs", tinyJSON(t, merges, repeat), nil},
		{"strings", tinyJSON(t, merges, func(m map[string]any) { repeat(m); stringMerges(m) }), []byte(`{"pad_token": "<think>"}`)},
		{"indented", indent(t, tinyJSON(t, merges, nil)), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FromBytes(c.data, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, err := referenceFromBytes(c.data, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if d := sameTables(got, want); d != nil {
				t.Fatalf("differs from the reference loader in %v", d)
			}
			if len(got.merges) == 0 {
				t.Fatal("no merges read")
			}
		})
	}
}

func indent(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	if err := jsonIndent(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestParseRejects: malformed big fields are errors naming the field and
// the entry, never a panic or a silent skip. (TestLoadRejects covers the
// pipeline checks.)
func TestParseRejects(t *testing.T) {
	model := func(edit func(m map[string]any)) func(map[string]any) {
		return func(f map[string]any) { edit(f["model"].(map[string]any)) }
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"vocab not an object", tinyJSON(t, nil, model(func(m map[string]any) { m["vocab"] = []int{1} })), "model: vocab"},
		{"negative id", tinyJSON(t, nil, model(func(m map[string]any) { m["vocab"].(map[string]int)["zz"] = -1 })), "negative id"},
		{"fractional id", []byte(strings.Replace(string(tinyJSON(t, nil, nil)), `"!":33`, `"!":33.5`, 1)), "not an integer"},
		{"string id", []byte(strings.Replace(string(tinyJSON(t, nil, nil)), `"!":33`, `"!":"33"`, 1)), "not a number"},
		{"merge of an unknown token", tinyJSON(t, nil, model(func(m map[string]any) { m["merges"] = []any{"a zz"} })), "merge 0"},
		{"merged token missing", tinyJSON(t, nil, model(func(m map[string]any) { m["merges"] = []any{"a b"} })), "merged token \"ab\""},
		{"merge with two spaces", tinyJSON(t, nil, model(func(m map[string]any) { m["merges"] = []any{"a b c"} })), "want \"a b\""},
		{"merge triple", tinyJSON(t, nil, model(func(m map[string]any) { m["merges"] = []any{[]string{"a", "b", "c"}} })), "more than two"},
		{"merge number", tinyJSON(t, nil, model(func(m map[string]any) { m["merges"] = []any{5} })), "merge 0"},
		{"shared id", tinyJSON(t, nil, model(func(m map[string]any) { m["vocab"].(map[string]int)["zz"] = 3 })), "share id 3"},
		{"trailing data", append(tinyJSON(t, nil, nil), []byte(` {}`)...), "after"},
		{"truncated", tinyJSON(t, nil, nil)[:500], "parse tokenizer.json"},
		{"not an object", []byte(`[1]`), "parse tokenizer.json"},
		{"invalid UTF-8", []byte(strings.Replace(string(tinyJSON(t, nil, nil)), `"!":33`, "\"\xff\":33", 1)), "parse tokenizer.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromBytes(c.data, nil)
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// FuzzParse: on any input the streaming parser does not panic, and whenever
// the reference loader accepts the file the two build the same tables.
func FuzzParse(f *testing.F) {
	f.Add(tinyJSON(f, [][2]string{{"a", "b"}, {"ab", "c"}}, nil))
	f.Add(tinyJSON(f, [][2]string{{"Ġ", "x"}}, func(m map[string]any) {
		m["model"].(map[string]any)["merges"] = []any{"Ġ x"}
	}))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[["a","a"]]}}`))
	f.Add([]byte(`{"model":null,"added_tokens":[{"id":0,"content":"x"}]}`))
	f.Add([]byte(`{"model":{"vocab":{"\u00e9":0,"a":1,"a":2}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := FromBytes(data, nil)
		want, refErr := referenceFromBytes(data, nil)
		if err != nil || refErr != nil || caseVariantNames(data) {
			return // the two may reject for different reasons; the new one must only not panic
		}
		if d := sameTables(got, want); d != nil {
			t.Fatalf("differs from the reference loader in %v", d)
		}
	})
}

// readFields are the object names either loader reads.
var readFields = []string{"added_tokens", "normalizer", "pre_tokenizer", "decoder", "model", "vocab", "merges",
	"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "byte_fallback",
	"ignore_merges", "id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"}

// caseVariantNames reports whether data names a field in another case
// ("Added_tokens"): encoding/json, under the reference loader, matches
// names without regard to case, while the Rust reference and parse.go do
// not, so the two loaders read such a file differently by design.
func caseVariantNames(data []byte) bool {
	d := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		tok, err := d.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() != '"' {
			continue
		}
		name := tok.String()
		for _, f := range readFields {
			if name != f && strings.EqualFold(name, f) {
				return true
			}
		}
	}
}

// TestAddedTokenEmptyContent: an added token without content is an error,
// never a panic (found by FuzzParse).
func TestAddedTokenEmptyContent(t *testing.T) {
	for _, data := range []string{`{"added_tokens":[{}]}`, `{"Added_tokens":[{}]}`} {
		if _, err := referenceFromBytes([]byte(data), nil); err == nil {
			t.Errorf("reference loaded %s", data)
		}
		if _, err := FromBytes([]byte(data), nil); err == nil {
			t.Errorf("loaded %s", data)
		}
	}
}
