// Package gse plugs the github.com/go-ego/gse Chinese word segmenter into
// package lexical's gse CJK modes. Import it for its side effect:
//
//	import _ "github.com/rerankd/rerankd/lexical/gse"
//
// It is a separate package because linking gse adds about 33 MB of
// embedded dictionaries to a binary; programs that keep the default,
// dictionary-free CJK analysis do not import it and do not pay for it.
//
// The dictionary (gse's simplified and traditional Chinese word lists,
// about 8.6 MB of text) is parsed when lexical first needs it, once per
// process. Both lists are loaded so that text in either script is cut into
// words; the scripts still do not match each other (钢琴 is not 鋼琴).
package gse

import (
	"errors"

	gseseg "github.com/go-ego/gse"

	"github.com/rerankd/rerankd/lexical"
)

func init() { lexical.RegisterSegmenter(load) }

// segmenter adapts gse to lexical.WordSegmenter. It is only read after
// loading, which is what makes sharing it between goroutines safe.
type segmenter struct{ seg *gseseg.Segmenter }

// Cut uses the dictionary DAG with gse's HMM for words it does not know,
// jieba's default.
func (s segmenter) Cut(run string) []string { return s.seg.Cut(run, true) }

// CutSearch is Cut plus the dictionary words of two and three characters
// inside longer words.
func (s segmenter) CutSearch(run string) []string { return s.seg.CutSearch(run, true) }

// load reads gse's embedded simplified and traditional Chinese lists.
func load() (lexical.WordSegmenter, error) {
	return newSegmenter(func(seg *gseseg.Segmenter) error { return seg.LoadDictEmbed("zh") })
}

// newSegmenter builds the segmenter from the words loadDict adds (with
// gse's HMM for unknown words, loaded with the first dictionary).
func newSegmenter(loadDict func(*gseseg.Segmenter) error) (lexical.WordSegmenter, error) {
	seg := &gseseg.Segmenter{SkipLog: true}
	if err := loadDict(seg); err != nil {
		return nil, errors.Join(errors.New("lexical/gse: loading the dictionary"), err)
	}
	if seg.Dict == nil || seg.Dict.NumTokens() == 0 {
		// gse built with -tags ne embeds no word lists.
		return nil, errors.New("lexical/gse: the gse dictionary is empty (built with -tags ne?)")
	}
	return segmenter{seg}, nil
}
