package lexical

// Terms is Analyzer.Terms with DefaultCJK: the terms a Scorer with a
// default Config counts in a document.
func Terms(text string) []string { return defaultAnalyzer.Terms(text) }

// QueryTerms is Analyzer.QueryTerms with DefaultCJK: the terms a Scorer
// with a default Config looks up for a query.
func QueryTerms(text string) []string { return defaultAnalyzer.QueryTerms(text) }
