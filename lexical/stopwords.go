package lexical

// stopwords is a small English stopword list: articles, pronouns,
// auxiliaries, prepositions and conjunctions that carry almost no topical
// signal. It is deliberately short (roughly the Lucene/Snowball core list):
// a long list removes words such as "not" or "first" that sometimes matter
// for ranking. Entries are lowercase and compared before stemming, so a
// stopword is never stemmed. Contractions appear with the apostrophe
// removed, because the analyzer joins "don't" into "dont".
var stopwords = func() map[string]struct{} {
	words := []string{
		"a", "about", "above", "after", "again", "all", "am", "an", "and",
		"any", "are", "as", "at", "be", "because", "been", "before", "being",
		"below", "between", "both", "but", "by", "can", "cant", "could",
		"did", "didnt", "do", "does", "doesnt", "doing", "dont", "down",
		"during", "each", "few", "for", "from", "further", "had", "has",
		"have", "having", "he", "her", "here", "hers", "herself", "him",
		"himself", "his", "how", "i", "if", "in", "into", "is", "isnt", "it",
		"its", "itself", "just", "me", "more", "most", "my", "myself", "no",
		"nor", "of", "off", "on", "once", "only", "or", "other", "our",
		"ours", "ourselves", "out", "over", "own", "same", "she", "should",
		"so", "some", "such", "than", "that", "thats", "the", "their",
		"theirs", "them", "themselves", "then", "there", "these", "they",
		"this", "those", "through", "to", "too", "under", "until", "up",
		"very", "was", "we", "were", "what", "when", "where", "which",
		"while", "who", "whom", "why", "will", "with", "would", "you",
		"your", "yours", "yourself", "yourselves",
	}
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()

// maxStopwordLen is the byte length of the longest stopword; longer tokens
// skip the map lookup.
const maxStopwordLen = 10 // "themselves", "yourselves"

func isStopword(term []byte) bool {
	if len(term) > maxStopwordLen {
		return false
	}
	_, ok := stopwords[string(term)]
	return ok
}
