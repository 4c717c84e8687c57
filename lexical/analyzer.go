package lexical

// Analyzer turns text into index terms: the same analysis the Scorer uses,
// for callers that keep their own index (retrieval/bm25). It holds no
// mutable state and is safe for concurrent use.
type Analyzer struct {
	mode CJKMode
	seg  WordSegmenter // shared; nil unless the mode uses gse
}

// defaultAnalyzer serves the package-level Terms and QueryTerms. Its mode
// needs no dictionary, so creating it cannot fail or load anything.
var defaultAnalyzer = &Analyzer{mode: DefaultCJK}

// NewAnalyzer returns an Analyzer for mode ("" is DefaultCJK). A gse mode
// needs package lexical/gse imported, and loads its dictionary on the
// first call in the process (seconds; see segmenter.go); later calls share
// it.
func NewAnalyzer(mode CJKMode) (*Analyzer, error) {
	mode, err := ParseCJKMode(string(mode))
	if err != nil {
		return nil, err
	}
	a := &Analyzer{mode: mode}
	if mode.usesGse() {
		if a.seg, err = loadSegmenter(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Mode returns the Analyzer's CJK mode.
func (a *Analyzer) Mode() CJKMode { return a.mode }

// Terms returns the index terms of a document, in order, exactly as a
// Scorer with this mode counts them: NFKC-normalised, lowercased Unicode
// words, Snowball English stemmed, with CJK runs split by the mode.
//
// English stopwords are included (unstemmed): the Scorer counts them in a
// document's length and matches them when a query consists only of
// stopwords, so an external index must keep them to agree with it.
// len(Terms(text)) is the document length BM25 uses.
func (a *Analyzer) Terms(text string) []string {
	var out []string
	s := a.scratch()
	s.analyze(text, func(term []byte, _ bool) { out = append(out, string(term)) })
	return out
}

// QueryTerms returns the distinct terms of a query, in first-occurrence
// order, exactly as a Scorer with this mode uses them: stopwords are
// dropped unless the query consists only of stopwords ("the who"), in
// which case they are kept. At most 1024 distinct terms are returned.
func (a *Analyzer) QueryTerms(text string) []string {
	return a.analyzeQuery(text).terms
}

func (a *Analyzer) scratch() *scratch { return &scratch{an: a} }
