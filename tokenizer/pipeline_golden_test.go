package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unigramCase is one line of testdata/unigram/golden-*.jsonl, written by the
// Rust reference through scripts/tokenizer/unigram (regen_unigram.sh): a
// single text (Pair nil) or a pair with its truncation.
type unigramCase struct {
	Text     string  `json:"text"`
	Pair     *string `json:"pair"`
	IDs      []int   `json:"ids"`
	Special  []int   `json:"special"`
	Decoded  string  `json:"decoded"`
	TypeIDs  []int   `json:"type_ids"`
	MaxLen   int     `json:"max_len"`
	Strategy string  `json:"strategy"`
	Error    bool    `json:"error"`
	SPM      []int   `json:"spm"`
}

func readJSONL[T any](tb testing.TB, path string) []T {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var c T
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("%s line %d: %v", path, len(out)+1, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func loadUnigram(tb testing.TB, form string) *Tokenizer {
	tb.Helper()
	tk, err := Load(filepath.Join("testdata", "unigram", "xlmr-"+form+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	return tk
}

// TestUnigramGolden: every id and type id of every string and pair equals
// the reference's, for the three normalizer forms and both post-processors.
func TestUnigramGolden(t *testing.T) {
	for _, form := range []string{"current", "older", "plain", "roberta"} {
		t.Run(form, func(t *testing.T) { checkPipelineGolden(t, "unigram", "xlmr-"+form) })
	}
}

// TestWordPieceGolden: the same for BERT layouts, uncased (Template
// post-processor) and cased (BertProcessing, max_input_chars_per_word 20).
func TestWordPieceGolden(t *testing.T) {
	for _, name := range []string{"bert-uncased", "bert-cased"} {
		t.Run(name, func(t *testing.T) { checkPipelineGolden(t, "wordpiece", name) })
	}
}

func checkPipelineGolden(t *testing.T, dir, name string) {
	tk, err := Load(filepath.Join("testdata", dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := readJSONL[unigramCase](t, filepath.Join("testdata", dir, "golden-"+name+".jsonl"))
	singles, pairs, bad := 0, 0, 0
	fail := func(format string, a ...any) {
		bad++
		if bad <= 10 {
			t.Errorf(format, a...)
		}
	}
	for i, c := range cases {
		if c.Pair == nil {
			singles++
			if got := tk.EncodeIDs(c.Text); !slices.Equal(got, c.IDs) {
				fail("line %d %q:\n got %v\nwant %v", i+1, c.Text, got, c.IDs)
			}
			e, err := tk.EncodeSingle(c.Text, 0)
			if err != nil || !slices.Equal(e.IDs, c.Special) {
				fail("line %d %q with special tokens:\n got %v (%v)\nwant %v", i+1, c.Text, e.IDs, err, c.Special)
			}
			if dec, err := tk.Decode(c.IDs, false); err != nil || dec != c.Decoded {
				fail("line %d decode: got %q (%v), want %q", i+1, dec, err, c.Decoded)
			}
			continue
		}
		pairs++
		strategy := LongestFirst
		if c.Strategy == "OnlySecond" {
			strategy = OnlySecond
		}
		e, err := tk.EncodePairTruncate(c.Text, *c.Pair, c.MaxLen, strategy)
		if (err != nil) != c.Error {
			fail("line %d pair max %d %s: error %v, reference failed: %v", i+1, c.MaxLen, c.Strategy, err, c.Error)
			continue
		}
		if !c.Error && (!slices.Equal(e.IDs, c.IDs) || !slices.Equal(e.TypeIDs, c.TypeIDs)) {
			fail("line %d pair %q + %q max %d %s:\n got %v %v\nwant %v %v", i+1, c.Text, *c.Pair, c.MaxLen, c.Strategy, e.IDs, e.TypeIDs, c.IDs, c.TypeIDs)
		}
		if !c.Error && e.AttentionLen != len(e.IDs) {
			fail("line %d: AttentionLen %d for %d ids", i+1, e.AttentionLen, len(e.IDs))
		}
	}
	if singles < 600 || pairs < 1000 {
		t.Fatalf("golden file has %d strings and %d pairs, want >= 600 and >= 1000", singles, pairs)
	}
	t.Logf("%d strings, %d pairs, %d mismatches", singles, pairs, bad)
}

// TestUnigramSentencePiece: the current normalizer form gives SentencePiece's
// own ids (shifted to the fairseq layout by build.py) wherever the reference
// does. The strings where the reference itself differs from SentencePiece
// (added tokens, which SentencePiece does not know, and a combining mark
// after a character the charsmap maps, which the reference maps per
// grapheme) are counted and must equal the reference.
func TestUnigramSentencePiece(t *testing.T) {
	tk := loadUnigram(t, "current")
	cases := readJSONL[unigramCase](t, filepath.Join("testdata", "unigram", "corpus.jsonl"))
	ref := readJSONL[unigramCase](t, filepath.Join("testdata", "unigram", "golden-xlmr-current.jsonl"))
	same, refDiffers := 0, 0
	for i, c := range cases {
		got := tk.EncodeIDs(c.Text)
		if ref[i].Text != c.Text {
			t.Fatalf("line %d: corpus and golden file out of step", i+1)
		}
		if !slices.Equal(ref[i].IDs, c.SPM) {
			refDiffers++
			t.Logf("reference differs from SentencePiece on %.60q", c.Text)
			continue
		}
		if !slices.Equal(got, c.SPM) {
			t.Errorf("line %d %q:\n got %v\nspm %v", i+1, c.Text, got, c.SPM)
			continue
		}
		same++
	}
	if same < 600 {
		t.Fatalf("only %d strings compared", same)
	}
	t.Logf("%d/%d strings equal SentencePiece; %d where the reference differs from it", same, len(cases), refDiffers)
}

// TestLoadRefusesSlowOnlyFolder: a folder with vocab.txt or a SentencePiece
// model but no tokenizer.json is refused naming the file it has.
func TestLoadRefusesSlowOnlyFolder(t *testing.T) {
	for _, name := range []string{"vocab.txt", "sentencepiece.bpe.model"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
}

// TestSharedPipeline: Shared hands out Unigram and WordPiece tokenizers
// like BPE ones, one instance per file.
func TestSharedPipeline(t *testing.T) {
	for _, p := range []string{"unigram/xlmr-current.json", "wordpiece/bert-cased.json"} {
		path := filepath.Join("testdata", p)
		a, err := Shared(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Shared(path)
		if err != nil || a != b {
			t.Fatalf("%s: second Shared gave %p (%v), want %p", p, b, err, a)
		}
		if e, err := a.EncodePair("a", "b", 0); err != nil || len(e.IDs) < 4 {
			t.Fatalf("%s: EncodePair = %v, %v", p, e, err)
		}
	}
}
