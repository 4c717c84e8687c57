package tokenizer

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// unigram is SentencePiece's Unigram model as the reference encodes it
// (encode_optimized): a common-prefix search from every character start
// with no length limit, a Viterbi pass in which a candidate replaces the
// best path to a position only when strictly better (the first wins ties),
// an unknown node scored min_score-10 wherever no single-character piece
// starts, consecutive unknowns fused into one token, and byte fallback only
// for a fused unknown run.
type unigram struct {
	pieces   []string
	scores   []float64
	ids      map[string]int // last id wins for a repeated piece, as the reference's map; shared with Tokenizer.vocab
	trie     *byteTrie
	unkID    int32 // -1: none
	unkScore float64
	byteFB   bool
}

func newUnigram(pieces []string, scores []float64, unkID *int, byteFallback bool) (*unigram, error) {
	u := &unigram{pieces: pieces, scores: scores, ids: make(map[string]int, len(pieces)),
		trie: newByteTrie(pieces), unkID: -1, byteFB: byteFallback}
	minScore := math.Inf(1)
	for i, p := range pieces {
		u.ids[p] = i
		minScore = min(minScore, scores[i])
	}
	if len(pieces) == 0 {
		minScore = 0
	}
	u.unkScore = minScore - 10
	if unkID != nil {
		if *unkID < 0 || *unkID >= len(pieces) {
			return nil, fmt.Errorf("model.unk_id %d out of range [0, %d)", *unkID, len(pieces))
		}
		u.unkID = int32(*unkID)
	}
	return u, nil
}

type uniNode struct {
	score float64
	start int32 // -1: unreached
	id    int32
}

// encode appends the ids of one pre-tokenized word to ids.
func (u *unigram) encode(s string, ids []int) ([]int, error) {
	if s == "" {
		return ids, nil
	}
	nodes := make([]uniNode, len(s)+1)
	for i := range nodes {
		nodes[i].start = -1
	}
	nodes[0].start = 0
	for at := 0; at < len(s); {
		base := nodes[at].score
		mblen := charLen(s[at:])
		single := false
		u.trie.prefixes(s[at:], func(n int) {
			t := &nodes[at+n]
			// The reference scores a piece by the id its map holds for the
			// piece's text (the last of repeated pieces).
			mid := int32(u.ids[s[at:at+n]])
			c := base + u.scores[mid]
			if t.start < 0 || c > t.score {
				*t = uniNode{score: c, start: int32(at), id: mid}
			}
			if n == mblen {
				single = true
			}
		})
		if !single {
			if u.unkID < 0 {
				return ids, fmt.Errorf("unigram: %q has no piece and the model has no unk_id", s[at:at+mblen])
			}
			t := &nodes[at+mblen]
			if c := base + u.unkScore; t.start < 0 || c > t.score {
				*t = uniNode{score: c, start: int32(at), id: u.unkID}
			}
		}
		at += mblen
	}
	// Walk back, fusing unknown runs, then emit in order.
	type tok struct {
		start, end int
		id         int32
	}
	var rev []tok
	for end := len(s); end > 0; {
		n := nodes[end]
		st := int(n.start)
		if n.id == u.unkID && len(rev) > 0 && rev[len(rev)-1].id == u.unkID && rev[len(rev)-1].start == end {
			rev[len(rev)-1].start = st
		} else {
			rev = append(rev, tok{st, end, n.id})
		}
		end = st
	}
	for i := len(rev) - 1; i >= 0; i-- {
		tk := rev[i]
		text := s[tk.start:tk.end]
		id, ok := u.ids[text]
		if ok {
			ids = append(ids, id)
			continue
		}
		if u.byteFB {
			if bs, ok := u.byteIDs(text); ok {
				ids = append(ids, bs...)
				continue
			}
		}
		ids = append(ids, int(u.unkID))
	}
	return ids, nil
}

func (u *unigram) byteIDs(text string) ([]int, bool) {
	out := make([]int, 0, len(text))
	for i := 0; i < len(text); i++ {
		id, ok := u.ids[fmt.Sprintf("<0x%02X>", text[i])]
		if !ok {
			return nil, false
		}
		out = append(out, id)
	}
	return out, true
}

// charLen is the byte length of the first character of s, invalid bytes
// counting one (the input has been made valid UTF-8 before this point).
func charLen(s string) int {
	c := s[0]
	switch {
	case c < 0x80:
		return 1
	case c>>5 == 6:
		return min(2, len(s))
	case c>>4 == 14:
		return min(3, len(s))
	case c>>3 == 30:
		return min(4, len(s))
	}
	return 1
}

// byteTrie answers common-prefix queries over the pieces with a sorted
// list instead of a node per byte: a map-per-node trie of XLM-R's 250k
// pieces cost ~3 s and ~500 MB to build.
type byteTrie struct {
	keys []string
}

func newByteTrie(pieces []string) *byteTrie {
	keys := make([]string, 0, len(pieces))
	for _, p := range pieces {
		if p != "" {
			keys = append(keys, p)
		}
	}
	slices.Sort(keys)
	return &byteTrie{keys: slices.Compact(keys)}
}

// prefixes calls fn with the length of every key that prefixes s, shortest
// first. Within [lo, hi) every key shares s[:k]; each step narrows to the
// keys whose byte k is s[k], and a key of length k+1 then sorts first.
func (t *byteTrie) prefixes(s string, fn func(n int)) {
	lo, hi := 0, len(t.keys)
	for k := 0; k < len(s) && lo < hi; k++ {
		c := s[k]
		keys := t.keys
		lo += sort.Search(hi-lo, func(i int) bool { key := keys[lo+i]; return len(key) > k && key[k] >= c })
		hi = lo + sort.Search(hi-lo, func(i int) bool { key := keys[lo+i]; return len(key) > k && key[k] > c })
		if lo < hi && len(t.keys[lo]) == k+1 {
			fn(k + 1)
		}
	}
}
