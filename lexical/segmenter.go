package lexical

import (
	"errors"
	"sync"
)

// WordSegmenter splits a run of Han characters (no spaces, punctuation or
// other scripts) into dictionary words. Implementations must be safe for
// concurrent use and return the same words for the same run every time.
type WordSegmenter interface {
	// Cut returns one segmentation of run, in order ("precise mode").
	Cut(run string) []string
	// CutSearch returns Cut's words plus the dictionary words inside the
	// long ones ("search mode": 中华人民共和国 also gives 中华 人民 共和国).
	CutSearch(run string) []string
}

// The segmenter is registered, not imported, so that programs that never
// select a gse mode do not link its dictionaries: linking
// github.com/go-ego/gse adds about 33 MB to a binary (it embeds its word
// lists, Japanese included). A program opts in with
//
//	import _ "github.com/rerankd/rerankd/lexical/gse"
//
// and the dictionary is then loaded once, by the first NewAnalyzer (or New)
// in a gse mode: it takes about 4 s of CPU and 200 MB of heap, which a
// process that never selects such a mode must not pay either.
var segmenter struct {
	mu     sync.Mutex
	load   func() (WordSegmenter, error)
	once   sync.Once
	loaded WordSegmenter
	err    error
}

// RegisterSegmenter makes the gse CJK modes usable; load is called once,
// when the first Analyzer in such a mode is created. Package lexical/gse
// calls it from init. A second registration panics: two segmenters would
// make the terms depend on import order.
func RegisterSegmenter(load func() (WordSegmenter, error)) {
	segmenter.mu.Lock()
	defer segmenter.mu.Unlock()
	if segmenter.load != nil {
		panic("lexical: RegisterSegmenter called twice")
	}
	segmenter.load = load
}

// errNoSegmenter is returned for a gse mode when no segmenter is linked in.
var errNoSegmenter = errors.New(`lexical: the gse CJK modes need the segmenter linked in: import _ "github.com/rerankd/rerankd/lexical/gse"`)

// loadSegmenter returns the registered segmenter, loading it on first use.
func loadSegmenter() (WordSegmenter, error) {
	segmenter.mu.Lock()
	load := segmenter.load
	segmenter.mu.Unlock()
	if load == nil {
		return nil, errNoSegmenter
	}
	segmenter.once.Do(func() {
		segmenter.loaded, segmenter.err = load()
		if segmenter.err == nil && segmenter.loaded == nil {
			segmenter.err = errors.New("lexical: the segmenter loader returned nothing")
		}
	})
	return segmenter.loaded, segmenter.err
}
