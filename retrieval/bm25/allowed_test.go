package bm25

import (
	"fmt"
	"testing"
)

// TestSearchAllowed: the k best of the allowed documents, with the scores
// an unfiltered search gives them, even when every unfiltered top-k
// document is refused.
func TestSearchAllowed(t *testing.T) {
	x, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		text := "common words here"
		if i%50 == 0 {
			text = "rare common"
		}
		if i < 20 {
			text = "common common common common"
		}
		x.Add(fmt.Sprintf("d%03d", i), text)
	}
	x.Delete("d100") // a deleted allowed document is never a hit
	all := x.Search("common", 500)
	score := map[string]float64{}
	for _, h := range all {
		score[h.ID] = h.Score
	}
	allowed := []string{"d050", "d100", "d150", "d200", "d250", "d499", "nope"}
	terms := []Term{{Text: "common", Weight: 1}}
	got := x.SearchAllowed(terms, 3, DefaultConfig(), FieldParams{}, allowed)
	if len(got) != 3 {
		t.Fatalf("%d hits, want 3: %v", len(got), got)
	}
	for i, h := range got {
		if h.ID == "d100" || h.ID == "nope" || score[h.ID] != h.Score {
			t.Errorf("hit %d %+v: not an allowed live document with its unfiltered score %v", i, h, score[h.ID])
		}
		if i > 0 && got[i-1].Score < h.Score {
			t.Errorf("hits out of order: %v", got)
		}
	}
	// The allowed documents' best three by the unfiltered ranking.
	var want []string
	for _, h := range all {
		for _, a := range allowed {
			if h.ID == a && len(want) < 3 {
				want = append(want, a)
			}
		}
	}
	for i := range want {
		if got[i].ID != want[i] {
			t.Errorf("hit %d is %s, want %s", i, got[i].ID, want[i])
		}
	}
	if got := x.SearchAllowed(terms, 3, DefaultConfig(), FieldParams{}, []string{}); len(got) != 0 {
		t.Errorf("empty allow-list: %v", got)
	}
	if got := x.SearchAllowed(terms, 3, DefaultConfig(), FieldParams{}, nil); len(got) != 3 || got[0].ID != all[0].ID {
		t.Errorf("nil allow-list is not every document: %v", got)
	}
}
