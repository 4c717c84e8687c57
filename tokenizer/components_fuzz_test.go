package tokenizer

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzComponents: on any input, every component configuration of
// testdata/components encodes without panicking, deterministically, to ids
// in range that decode; an input the reference encoded (the golden corpus,
// which seeds the fuzzer) gives its ids; and the rules' invariants hold:
// the normalization forms are idempotent, a split that removes nothing
// gives pieces that join back to its input, and the byte-fallback model
// decodes any plain text back to itself.
func FuzzComponents(f *testing.F) {
	type config struct {
		name string
		tk   *Tokenizer
		want map[string][]int
	}
	var configs []config
	var texts []string
	for _, name := range componentFiles(f) {
		tk, err := Load(filepath.Join("testdata", "components", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		c := config{name: name, tk: tk, want: map[string][]int{}}
		for _, g := range readJSONL[componentCase](f, filepath.Join("testdata", "components", "golden-"+name+".jsonl")) {
			c.want[g.Text] = g.IDs
			if name == "nfc" {
				texts = append(texts, g.Text)
			}
		}
		configs = append(configs, c)
	}
	for _, s := range texts {
		f.Add(s)
	}
	forms := []normForm{{norm.NFC}, {norm.NFD}, {norm.NFKC}, {norm.NFKD}}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range configs {
			ids := c.tk.EncodeIDs(s)
			if again := c.tk.EncodeIDs(s); !slices.Equal(ids, again) {
				t.Fatalf("%s: EncodeIDs(%q) not deterministic", c.name, s)
			}
			if want, ok := c.want[s]; ok && !slices.Equal(ids, want) {
				t.Fatalf("%s: EncodeIDs(%q) = %v, the reference %v", c.name, s, ids, want)
			}
			for _, id := range ids {
				if id < 0 || id >= c.tk.VocabSize() {
					t.Fatalf("%s: id %d out of range", c.name, id)
				}
			}
			dec, err := c.tk.Decode(ids, false)
			if err != nil {
				t.Fatalf("%s: Decode: %v", c.name, err)
			}
			if c.name == "byte-fallback" && plainText(s) && dec != s {
				t.Fatalf("byte-fallback: %q decodes to %q", s, dec)
			}
		}
		v := validUTF8(s)
		for _, f := range forms {
			if once := f.apply(v); f.apply(once) != once {
				t.Fatalf("%v: not idempotent on %q", f.form, v)
			}
		}
		for _, step := range []preStep{
			charSplit{pred: isRefPunct, behavior: splitIsolated},
			charSplit{pred: isRefNumeric, behavior: splitContiguous},
			charSplit{pred: isRefSpace, behavior: splitMergedWithPrevious},
			charSplit{pred: isRefSpace, behavior: splitMergedWithNext},
		} {
			if got := strings.Join(step.split(v, true, nil), ""); got != v {
				t.Fatalf("%#v: pieces of %q join to %q", step, v, got)
			}
		}
	})
}

// plainText: valid UTF-8 that byte fallback round-trips: no added token or
// piece spelled out (<s>, <0x41>, ▁), no leading space (the Metaspace
// decoder drops it).
func plainText(s string) bool {
	if !utf8.ValidString(s) || strings.HasPrefix(s, " ") {
		return false
	}
	for _, bad := range []string{"<s>", "</s>", "<pad>", "<unk>", "<mask>", "<0x", "▁"} {
		if strings.Contains(s, bad) {
			return false
		}
	}
	return true
}

// TestComponentsDiff compares ours with the reference's ids and decoded
// text written by
// scripts/tokenizer/components/diff.js (set RERANKD_COMPONENTS_DIFF to its
// output; skipped otherwise: CI has no reference).
func TestComponentsDiff(t *testing.T) {
	file := os.Getenv("RERANKD_COMPONENTS_DIFF")
	if file == "" {
		t.Skip("RERANKD_COMPONENTS_DIFF not set")
	}
	type row struct {
		Config  string `json:"config"`
		Text    string `json:"text"`
		IDs     []int  `json:"ids"`
		Decoded string `json:"decoded"`
	}
	toks := map[string]*Tokenizer{}
	bad, n := 0, 0
	for _, r := range readJSONL[row](t, file) {
		tk := toks[r.Config]
		if tk == nil {
			var err error
			if tk, err = Load(filepath.Join("testdata", r.Config+".json")); err != nil {
				t.Fatal(err)
			}
			toks[r.Config] = tk
		}
		n++
		if got := tk.EncodeIDs(r.Text); !slices.Equal(got, r.IDs) {
			if bad++; bad <= 10 {
				t.Errorf("%s %q:\n got %v\nwant %v", r.Config, r.Text, got, r.IDs)
			}
		}
		if dec, err := tk.Decode(r.IDs, false); err != nil || dec != r.Decoded {
			if bad++; bad <= 10 {
				t.Errorf("%s decode %v: %q (%v), want %q", r.Config, r.IDs, dec, err, r.Decoded)
			}
		}
	}
	t.Logf("%d encodings and decodings, %d differ", n, bad)
}

// TestExportFuzzCorpus writes the strings of FuzzComponents' cached corpus
// as JSONL for diff.js (set RERANKD_FUZZ_EXPORT to the output file).
func TestExportFuzzCorpus(t *testing.T) {
	file := os.Getenv("RERANKD_FUZZ_EXPORT")
	if file == "" {
		t.Skip("RERANKD_FUZZ_EXPORT not set")
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "fuzz", "github.com", "rerankd", "rerankd", "tokenizer", "FuzzComponents")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		_, lit, ok := strings.Cut(strings.TrimSpace(string(data)), "\nstring(")
		if !ok {
			continue
		}
		s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			continue
		}
		line, _ := json.Marshal(map[string]string{"text": s})
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzPipelineLoad: any tokenizer.json, well-formed or not, either loads
// or is refused with an error; one that loads encodes and decodes without
// panicking. Seeded with a tiny Unigram model carrying the components of
// every configuration in testdata/components.
func FuzzPipelineLoad(f *testing.F) {
	const vocab = `[["<unk>",0],["▁",-1],["a",-2],["▁a",-1.5],["b",-2],["<0x41>",0],["1",-3],["-",-3]]`
	for _, name := range componentFiles(f) {
		data, err := os.ReadFile(filepath.Join("testdata", "components", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		var file map[string]json.RawMessage
		if err := json.Unmarshal(data, &file); err != nil {
			f.Fatal(err)
		}
		seed := `{"added_tokens":[{"id":0,"content":"<unk>","special":true}],"normalizer":` + string(file["normalizer"]) +
			`,"pre_tokenizer":` + string(file["pre_tokenizer"]) + `,"decoder":` + string(file["decoder"]) +
			`,"post_processor":null,"model":{"type":"Unigram","unk_id":0,"byte_fallback":true,"vocab":` + vocab + `}}`
		if _, err := FromBytes([]byte(seed), nil); err != nil {
			f.Fatalf("seed %s: %v", name, err)
		}
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := FromBytes(data, nil)
		if err != nil {
			return
		}
		for _, s := range []string{"", "a b-1 ab\u0301 A", " \u3000x<unk>\xff"} {
			ids := tk.EncodeIDs(s)
			if _, err := tk.Decode(ids, false); err != nil {
				t.Fatalf("Decode(%v): %v", ids, err)
			}
		}
	})
}
