package tokenizer

import "strings"

// addedMatcher finds added tokens in raw text, leftmost-longest, the rule of
// the reference's Aho-Corasick matcher. Qwen files have a few dozen added
// tokens, so a first-byte table with candidates sorted longest first is as
// fast as an automaton and far simpler.
type addedMatcher struct {
	byFirst [256][]int // first byte -> indexes into tokens, longest first
	tokens  []addedToken
}

func newAddedMatcher(added []addedToken) *addedMatcher {
	m := &addedMatcher{tokens: added}
	for _, i := range sortedByLengthDesc(added) {
		if added[i].content == "" {
			continue // refused by checkPipeline; never matched
		}
		c := added[i].content[0]
		m.byFirst[c] = append(m.byFirst[c], i)
	}
	return m
}

// segment is a piece of the input: either an added token (added >= 0) or
// plain text to normalize and split (added < 0).
type segment struct {
	start, end int
	added      int
}

// split appends to dst the segments of text in order. A special token
// that overlaps one of the plain spans is not matched: its characters are
// text (see EncodeIDsUser).
func (m *addedMatcher) split(text string, dst []segment, plainSpans [][2]int) []segment {
	plain := 0
	for i := 0; i < len(text); i++ {
		cands := m.byFirst[text[i]]
		if len(cands) == 0 {
			continue
		}
		for _, c := range cands {
			tok := m.tokens[c].content
			if strings.HasPrefix(text[i:], tok) && (!m.tokens[c].special || !overlaps(plainSpans, i, i+len(tok))) {
				if plain < i {
					dst = append(dst, segment{plain, i, -1})
				}
				dst = append(dst, segment{i, i + len(tok), c})
				i += len(tok) - 1
				plain = i + 1
				break
			}
		}
	}
	if plain < len(text) {
		dst = append(dst, segment{plain, len(text), -1})
	}
	return dst
}

// overlaps reports whether [start, end) overlaps one of spans.
func overlaps(spans [][2]int, start, end int) bool {
	for _, sp := range spans {
		if start < sp[1] && sp[0] < end {
			return true
		}
	}
	return false
}
