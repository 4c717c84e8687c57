package lexical

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// withoutSegmenter runs f as if no package had registered a segmenter.
func withoutSegmenter(t *testing.T, f func()) {
	t.Helper()
	segmenter.mu.Lock()
	saved := segmenter.load
	segmenter.load = nil
	segmenter.mu.Unlock()
	defer func() {
		segmenter.mu.Lock()
		segmenter.load = saved
		segmenter.mu.Unlock()
	}()
	f()
}

func TestGseModeNeedsSegmenter(t *testing.T) {
	withoutSegmenter(t, func() {
		for _, m := range []CJKMode{CJKGse, CJKGseBigram, CJKGseUnigram} {
			if _, err := NewAnalyzer(m); !errors.Is(err, errNoSegmenter) {
				t.Errorf("NewAnalyzer(%s) without lexical/gse: err = %v, want errNoSegmenter", m, err)
			}
			cfg := DefaultConfig()
			cfg.CJK = m
			if _, err := New(cfg); !errors.Is(err, errNoSegmenter) {
				t.Errorf("New(CJK %s) without lexical/gse: err = %v, want errNoSegmenter", m, err)
			}
		}
		// The dictionary-free modes never need it.
		for _, m := range []CJKMode{"", CJKBigram, CJKUnigramBigram} {
			if _, err := NewAnalyzer(m); err != nil {
				t.Errorf("NewAnalyzer(%q): %v", m, err)
			}
		}
	})
}

func TestRegisterSegmenterTwicePanics(t *testing.T) {
	withoutSegmenter(t, func() {
		load := func() (WordSegmenter, error) { return nil, errors.New("unused") }
		RegisterSegmenter(load)
		defer func() {
			if recover() == nil {
				t.Error("second RegisterSegmenter did not panic")
			}
		}()
		RegisterSegmenter(load)
	})
}

func TestParseCJKMode(t *testing.T) {
	for _, m := range CJKModes() {
		if got, err := ParseCJKMode(string(m)); err != nil || got != m {
			t.Errorf("ParseCJKMode(%q) = %q, %v", m, got, err)
		}
	}
	if got, err := ParseCJKMode(""); err != nil || got != DefaultCJK {
		t.Errorf("ParseCJKMode(\"\") = %q, %v; want the default", got, err)
	}
	if CJKModes()[0] != DefaultCJK {
		t.Errorf("CJKModes()[0] = %q, want the default first", CJKModes()[0])
	}
	for _, bad := range []string{"Bigram", "jieba", "gse+", " bigram"} {
		if _, err := ParseCJKMode(bad); err == nil {
			t.Errorf("ParseCJKMode(%q) accepted", bad)
		}
	}
	cfg := DefaultConfig()
	cfg.CJK = "trigram"
	if err := cfg.Validate(); err == nil {
		t.Error("Validate accepted CJK mode \"trigram\"")
	}
}

// pairSegmenter stands in for gse in the concurrency test: Cut splits a run
// into pairs of characters, CutSearch adds each character of a longer word.
// It keeps no state, so a race found with it is lexical's own.
type pairSegmenter struct{}

func (pairSegmenter) Cut(run string) []string {
	rs := []rune(run)
	var out []string
	for i := 0; i < len(rs); i += 2 {
		out = append(out, string(rs[i:min(i+2, len(rs))]))
	}
	return out
}

func (p pairSegmenter) CutSearch(run string) []string {
	out := p.Cut(run)
	for _, w := range p.Cut(run) {
		if rs := []rune(w); len(rs) > 1 {
			for _, r := range rs {
				out = append(out, string(r))
			}
		}
	}
	return out
}

// TestSegmentedConcurrent shares one Analyzer per gse mode between
// goroutines (run with -race): lexical's side of those modes must keep no
// shared state. gse's own side is raced in package lexical/gse, on a small
// dictionary: loading the embedded one under -race is slow (docs/testing.md).
func TestSegmentedConcurrent(t *testing.T) {
	texts := []string{"我喜欢弹钢琴", "Meeting in 北京大学 at 3pm", "中华人民共和国 and the 人民", "plain English, no Han"}
	for _, m := range []CJKMode{CJKGse, CJKGseBigram, CJKGseUnigram} {
		a := &Analyzer{mode: m, seg: pairSegmenter{}}
		want := make([][2][]string, len(texts))
		for i, s := range texts {
			want[i] = [2][]string{a.Terms(s), a.QueryTerms(s)}
		}
		if len(want[0][0]) == 0 {
			t.Fatalf("%s: no terms for %q", m, texts[0])
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for k := range 2 * len(texts) {
					i := (k + g) % len(texts)
					if got := a.Terms(texts[i]); !slices.Equal(got, want[i][0]) {
						t.Errorf("%s: concurrent Terms(%q) = %q, want %q", m, texts[i], got, want[i][0])
					}
					if got := a.QueryTerms(texts[i]); !slices.Equal(got, want[i][1]) {
						t.Errorf("%s: concurrent QueryTerms(%q) = %q, want %q", m, texts[i], got, want[i][1])
					}
				}
			})
		}
		wg.Wait()
	}
}
