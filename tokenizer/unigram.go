package tokenizer

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// unigram is SentencePiece's Unigram model as the reference encodes it
// (encode_optimized): a common-prefix search from every character start
// with no length limit, a Viterbi pass in which a candidate replaces the
// best path to a position only when strictly better (the first wins ties),
// an unknown node scored min_score-10 wherever no single-character piece
// starts, consecutive unknowns fused into one token, and byte fallback only
// for a fused unknown run.
type unigram struct {
	scores   []float64
	trie     *pieceTrie // piece -> id, the last id of a repeated piece (the reference's map keeps the last)
	unkID    int32      // -1: none
	unkScore float64
	byteFB   bool
	byteIDs  [256]int32 // id of <0xXX>; -1: missing
	// control marks the pieces that are special added tokens ("<s>",
	// "</s>": XLM-R's vocabulary lists them with score 0). In text whose
	// special tokens are plain (encodePlain) they are never candidates,
	// as SentencePiece never produces a CONTROL piece from text.
	control []bool
}

// markControl marks the piece of text content, if the vocabulary has
// one, as a control piece (see control).
func (u *unigram) markControl(content string) {
	id, ok := u.trie.lookup(content)
	if !ok {
		return
	}
	if u.control == nil {
		u.control = make([]bool, len(u.scores))
	}
	if id < len(u.control) {
		u.control[id] = true
	}
}

// encodePlain is encode for text whose special-token strings are plain
// text: control pieces are not candidates, so "</s>" is encoded as the
// pieces of its characters.
func (u *unigram) encodePlain(s string, ids []int) ([]int, error) {
	return u.encodeWith(s, ids, u.control)
}

func newUnigram(pieces []string, scores []float64, unkID *int, byteFallback bool) (*unigram, error) {
	u := &unigram{scores: scores, trie: newPieceTrie(pieces), unkID: -1, byteFB: byteFallback}
	minScore := math.Inf(1)
	for _, s := range scores {
		minScore = min(minScore, s)
	}
	for b := range u.byteIDs {
		id, ok := u.trie.lookup(fmt.Sprintf("<0x%02X>", b))
		u.byteIDs[b] = int32(id)
		if !ok {
			u.byteIDs[b] = -1
		}
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
	if u.unkID < 0 && (!byteFallback || slices.Contains(u.byteIDs[:], -1)) {
		// The reference fails on the first character it has no piece
		// for ("é", "中"): every such request would fail. Say so at load.
		return nil, errors.New("model.unk_id is null and the model has no complete byte fallback: text with a character outside the vocabulary could not be encoded (not a usable Unigram tokenizer)")
	}
	return u, nil
}

type uniNode struct {
	score float64
	start int32 // -1: unreached
	id    int32
}

// encode appends the ids of one pre-tokenized word to ids.
func (u *unigram) encode(s string, ids []int) ([]int, error) { return u.encodeWith(s, ids, nil) }

// encodeWith is encode with the pieces skip marks left out (nil: none).
func (u *unigram) encodeWith(s string, ids []int, skip []bool) ([]int, error) {
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
		// The reference scores a piece by the id its map holds for the
		// piece's text (the last of repeated pieces), the id the trie keeps.
		u.trie.prefixes(s[at:], func(n int, mid int32) {
			if skip != nil && int(mid) < len(skip) && skip[mid] {
				return
			}
			t := &nodes[at+n]
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
		id, ok := u.trie.lookup(text)
		if ok {
			ids = append(ids, id)
			continue
		}
		if u.byteFB {
			var ok bool
			if ids, ok = u.bytePieces(text, ids); ok {
				continue
			}
		}
		ids = append(ids, int(u.unkID))
	}
	return ids, nil
}

// bytePieces appends the <0xXX> ids of text's bytes, or reports false when
// one is missing from the vocabulary.
func (u *unigram) bytePieces(text string, ids []int) ([]int, bool) {
	for i := 0; i < len(text); i++ {
		if u.byteIDs[text[i]] < 0 {
			return ids, false
		}
	}
	for i := 0; i < len(text); i++ {
		ids = append(ids, int(u.byteIDs[text[i]]))
	}
	return ids, true
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
