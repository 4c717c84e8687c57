package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func TestProduct(t *testing.T) {
	got := product(axis{"--a", "1", "2"}, axis{"--b", "x", "y", "z"})
	want := []string{"--a=1 --b=x", "--a=1 --b=y", "--a=1 --b=z", "--a=2 --b=x", "--a=2 --b=y", "--a=2 --b=z"}
	if !slices.Equal(got, want) {
		t.Errorf("product = %q, want %q", got, want)
	}
}

// TestLocomoCV: on the two fixture conversations each fold is chosen on
// the other, the cross-validated run covers every judged question, and
// every grid parses.
func TestLocomoCV(t *testing.T) {
	for _, name := range cvGridNames() {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"locomo", "--data", fixtures, "--cv", name, "--json"}, &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var res cvResult
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Folds) != 2 {
				t.Fatalf("%d folds, want one per fixture conversation", len(res.Folds))
			}
			for _, f := range res.Folds {
				if !slices.Contains(cvGrids[name], f.Setting) {
					t.Errorf("fold %s chose %q, not a grid point", f.HeldOut, f.Setting)
				}
			}
			if res.CrossValidated.Summary.Queries != res.Default.Summary.Queries || res.Default.Summary.Queries == 0 {
				t.Errorf("cross-validated %d queries, default %d", res.CrossValidated.Summary.Queries, res.Default.Summary.Queries)
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run([]string{"locomo", "--data", fixtures, "--cv", "nope"}, &out, &errb); code != exitUsage {
		t.Errorf("unknown grid: exit %d, want %d", code, exitUsage)
	}
}
