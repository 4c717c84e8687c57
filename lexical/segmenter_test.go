package lexical

import (
	"errors"
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
