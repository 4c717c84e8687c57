package gse

import (
	"slices"
	"sync"
	"testing"

	gseseg "github.com/go-ego/gse"
)

// smallDict is a few words of gse's dictionary format ("word freq pos"):
// enough for the DAG to choose between readings and for CutSearch to find
// words inside longer ones, and far quicker to load under -race than the
// embedded lists (docs/testing.md).
const smallDict = `中华 1000 nz
人民 2000 n
共和国 1500 n
中华人民共和国 500 ns
北京 3000 ns
大学 2500 n
北京大学 800 nt
我 5000 r
喜欢 1200 v
钢琴 300 n
弹 400 v`

// TestConcurrent shares one segmenter between goroutines (run with
// -race): gse's Cut and CutSearch, HMM included, must only read the
// dictionary and model, and give the sequential answer every time.
// lexical's own concurrency in the gse modes is raced in its package with
// a stand-in segmenter; this test covers gse's side.
func TestConcurrent(t *testing.T) {
	ws, err := newSegmenter(func(seg *gseseg.Segmenter) error { return seg.LoadDictStr(smallDict) })
	if err != nil {
		t.Fatal(err)
	}
	// Known words, a long word with words inside, and characters the
	// dictionary lacks (cut by the HMM).
	runs := []string{"我喜欢弹钢琴", "中华人民共和国", "北京大学", "我在北京大学弹钢琴唱歌", "今天天气很好"}
	type cut struct{ plain, search []string }
	want := make([]cut, len(runs))
	for i, r := range runs {
		want[i] = cut{ws.Cut(r), ws.CutSearch(r)}
	}
	if !slices.Contains(want[1].search, "人民") || !slices.Equal(want[1].plain, []string{"中华人民共和国"}) {
		t.Fatalf("small dictionary not in use: Cut %q, CutSearch %q", want[1].plain, want[1].search)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 2 * len(runs) {
				i := (k + g) % len(runs)
				if got := ws.Cut(runs[i]); !slices.Equal(got, want[i].plain) {
					t.Errorf("concurrent Cut(%q) = %q, want %q", runs[i], got, want[i].plain)
				}
				if got := ws.CutSearch(runs[i]); !slices.Equal(got, want[i].search) {
					t.Errorf("concurrent CutSearch(%q) = %q, want %q", runs[i], got, want[i].search)
				}
			}
		})
	}
	wg.Wait()
}
