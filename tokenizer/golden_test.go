package tokenizer

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"testing"
)

// goldenCase is one line of testdata/golden.jsonl, written by the Rust
// Hugging Face tokenizers through scripts/tokenizer/regen_golden.sh. There is
// deliberately no -update flag here: the golden file is the reference's
// output, and regenerating it from this package would make the test vacuous.
type goldenCase struct {
	Text    string `json:"text"`
	IDs     []int  `json:"ids"`
	Decoded string `json:"decoded"`
}

// -golden points the parity tests at another file of the same shape, such as
// the output of scripts/tokenizer/stress.js.
var goldenFile = flag.String("golden", "testdata/golden.jsonl", "reference encodings (jsonl) to check against")

func readGolden(tb testing.TB) []goldenCase {
	tb.Helper()
	f, err := os.Open(*goldenFile)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatalf("golden line %d: %v", len(out)+1, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestGoldenParity requires every id of every corpus string to equal the
// reference's, and decoding to equal the reference's decode.
func TestGoldenParity(t *testing.T) {
	tk := qwen(t)
	cases := readGolden(t)
	if *goldenFile == "testdata/golden.jsonl" && len(cases) < 3000 {
		t.Fatalf("golden corpus has %d strings, want >= 3000", len(cases))
	}
	idMismatch, decMismatch := 0, 0
	for i, c := range cases {
		got := tk.EncodeIDs(c.Text)
		if !slices.Equal(got, c.IDs) {
			idMismatch++
			if idMismatch <= 10 {
				t.Errorf("line %d %q:\n got %v\nwant %v", i+1, c.Text, got, c.IDs)
			}
		}
		dec, err := tk.Decode(c.IDs, false)
		if err != nil || dec != c.Decoded {
			decMismatch++
			if decMismatch <= 10 {
				t.Errorf("line %d decode: got %q (%v), want %q", i+1, dec, err, c.Decoded)
			}
		}
	}
	t.Logf("exact id match: %d/%d strings; decode match: %d/%d",
		len(cases)-idMismatch, len(cases), len(cases)-decMismatch, len(cases))
}

// TestGoldenEncodingConsistency checks, on the same corpus, that Encode,
// EncodeIDs and EncodeBatch agree, that offsets are well formed and cover
// the text, and that decode(encode(x)) == NFC(x).
func TestGoldenEncodingConsistency(t *testing.T) {
	tk := qwen(t)
	cases := readGolden(t)
	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.Text
	}
	batch := tk.EncodeBatch(texts)
	for i, c := range cases {
		e := tk.Encode(c.Text)
		if !slices.Equal(e.IDs, c.IDs) || !slices.Equal(batch[i].IDs, c.IDs) {
			t.Fatalf("line %d: Encode/EncodeBatch ids differ from the golden ids", i+1)
		}
		checkOffsets(t, c.Text, e)
		dec, err := tk.Decode(e.IDs, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := string(appendNFCRef(nil, c.Text)); dec != want {
			t.Fatalf("line %d: decode(encode(x)) = %q, want NFC(x) = %q", i+1, dec, want)
		}
	}
}

// checkOffsets: one offset per id, inside the text, never going backwards,
// and together covering every byte of the text.
func checkOffsets(t testing.TB, text string, e Encoding) {
	t.Helper()
	if len(e.Offsets) != len(e.IDs) {
		t.Fatalf("%q: %d offsets for %d ids", text, len(e.Offsets), len(e.IDs))
	}
	covered := 0
	for k, o := range e.Offsets {
		if o.Start < 0 || o.End > len(text) || o.Start >= o.End {
			t.Fatalf("%q: token %d offset %v out of range", text, k, o)
		}
		if k > 0 && o.Start < e.Offsets[k-1].Start {
			t.Fatalf("%q: token %d offset %v goes back from %v", text, k, o, e.Offsets[k-1])
		}
		if o.Start > covered {
			t.Fatalf("%q: bytes [%d,%d) are covered by no token", text, covered, o.Start)
		}
		covered = max(covered, o.End)
	}
	if covered != len(text) {
		t.Fatalf("%q: offsets cover %d of %d bytes", text, covered, len(text))
	}
}
