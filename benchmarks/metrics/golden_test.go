package metrics

import (
	"encoding/json"
	"flag"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// -update rewrites testdata/golden.summary.json (and nothing else) from the
// code. Its values were checked by hand: testdata/README.md.
var update = flag.Bool("update", false, "rewrite testdata/golden.summary.json from the code")

func TestGolden(t *testing.T) {
	qrels := readFile(t, "golden.qrels", ReadQrels)
	run := readFile(t, "golden.run", ReadRun)
	sum, _, err := Evaluate(qrels, run)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden.summary.json")
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want, have map[string]float64
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(want))
	if wantKeys := slices.Sorted(slices.Values(SummaryKeys())); !slices.Equal(keys, wantKeys) {
		t.Fatalf("golden keys %v, want %v", keys, wantKeys)
	}
	for _, k := range keys {
		if math.Abs(have[k]-want[k]) > 1e-12 {
			t.Errorf("%s = %.17g, golden %.17g", k, have[k], want[k])
		}
	}
}

func readFile[T any](t *testing.T, name string, read func(io.Reader) (T, error)) T {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}
