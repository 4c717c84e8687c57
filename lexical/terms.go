package lexical

// Terms returns the index terms of a document, in order, exactly as the
// Scorer counts them: NFKC-normalised, lowercased Unicode words, Porter
// step-1 stemmed, with CJK runs as overlapping character bigrams.
//
// English stopwords are included (unstemmed): the Scorer counts them in a
// document's length and matches them when a query consists only of
// stopwords, so an external index must keep them to agree with it.
// len(Terms(text)) is the document length BM25 uses.
func Terms(text string) []string {
	var out []string
	analyze(text, func(term []byte, _ bool) { out = append(out, string(term)) })
	return out
}

// QueryTerms returns the distinct terms of a query, in first-occurrence
// order, exactly as the Scorer uses them: stopwords are dropped unless the
// query consists only of stopwords ("the who"), in which case they are
// kept. At most 1024 distinct terms are returned.
func QueryTerms(text string) []string {
	return analyzeQuery(text).terms
}
