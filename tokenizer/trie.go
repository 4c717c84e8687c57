package tokenizer

import (
	"slices"
	"strings"
)

// pieceTrie is a byte trie over a vocabulary, built in one pass that is also
// an MSD radix sort of the pieces, so a 250k-piece vocabulary costs neither
// a comparison sort of its strings nor a map from piece to id. Children of a
// node are contiguous and ordered by byte; the root's are also indexed
// directly. A node's id is that of the last piece spelling it (the
// reference keeps the last of repeated pieces in its map); -1 marks a node
// that is only a prefix. A node below which only one piece lies is a tail:
// the rest of that piece is compared as a string instead of one node per
// byte (most of a large vocabulary's bytes are such tails).
type pieceTrie struct {
	nodes  []trieNode
	pieces []string
	root   [256]int32 // root's child per byte; 0: none (node 0 is the root)
}

type trieNode struct {
	first int32  // index of the first child; a tail: -1 - the piece's id
	id    int32  // -1: a prefix only
	count uint16 // number of children
	label byte   // the byte leading to the node
}

func newPieceTrie(pieces []string) *pieceTrie {
	idx := make([]int32, len(pieces))
	for i := range idx {
		idx[i] = int32(i)
	}
	t := &pieceTrie{nodes: make([]trieNode, 1, len(pieces)*2+1), pieces: pieces}
	t.nodes[0].id = -1
	b := trieBuilder{t: t, pieces: pieces, tmp: make([]int32, len(pieces))}
	b.build(0, idx, 0)
	for i := range int(t.nodes[0].count) {
		c := t.nodes[0].first + int32(i)
		t.root[t.nodes[c].label] = c
	}
	return t
}

func (t *pieceTrie) grow(labels []byte) int32 {
	at := int32(len(t.nodes))
	for _, c := range labels {
		t.nodes = append(t.nodes, trieNode{id: -1, label: c})
	}
	return at
}

type trieBuilder struct {
	t      *pieceTrie
	pieces []string
	tmp    []int32
	counts [256]int32
}

// build fills node from the pieces in idx, which all share their first
// depth bytes: those of exactly that length name the node, the others are
// bucketed by their next byte (a counting sort) into the children.
func (b *trieBuilder) build(node int32, idx []int32, depth int) {
	t := b.t
	if depth > 0 && len(idx) == 1 && len(b.pieces[idx[0]]) > depth {
		t.nodes[node].first = -1 - idx[0]
		return
	}
	rest := idx[:0]
	for _, i := range idx {
		if len(b.pieces[i]) == depth {
			t.nodes[node].id = max(t.nodes[node].id, i)
		} else {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return
	}
	var seen []byte
	var seenBuf [256]byte
	seen = seenBuf[:0]
	for _, i := range rest {
		c := b.pieces[i][depth]
		if b.counts[c] == 0 {
			seen = append(seen, c)
		}
		b.counts[c]++
	}
	slices.Sort(seen)
	// Prefix sums into start positions, children allocated together.
	var starts [256]int32
	pos := int32(0)
	for _, c := range seen {
		starts[c] = pos
		pos += b.counts[c]
		b.counts[c] = 0
	}
	tmp := b.tmp[:len(rest)]
	fill := starts
	for _, i := range rest {
		c := b.pieces[i][depth]
		tmp[fill[c]] = i
		fill[c]++
	}
	copy(rest, tmp)
	base := t.grow(seen)
	t.nodes[node].first, t.nodes[node].count = base, uint16(len(seen))
	for k, c := range seen {
		end := int32(len(rest))
		if k+1 < len(seen) {
			end = starts[seen[k+1]]
		}
		b.build(base+int32(k), rest[starts[c]:end], depth+1)
	}
}

// child is node's child along byte c, or 0.
func (t *pieceTrie) child(node int32, c byte) int32 {
	if node == 0 {
		return t.root[c]
	}
	n := &t.nodes[node]
	lo, hi := n.first, n.first+int32(n.count)
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		switch l := t.nodes[m].label; {
		case l == c:
			return m
		case l < c:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0
}

// tail is the piece below a tail node, or -1.
func (t *pieceTrie) tail(node int32) int32 {
	if f := t.nodes[node].first; f < 0 {
		return -1 - f
	}
	return -1
}

// prefixes calls fn with the length and id of every piece that prefixes s,
// shortest first.
func (t *pieceTrie) prefixes(s string, fn func(n int, id int32)) {
	node := int32(0)
	for k := 0; k < len(s); k++ {
		if node = t.child(node, s[k]); node == 0 {
			return
		}
		if id := t.nodes[node].id; id >= 0 {
			fn(k+1, id)
		}
		if p := t.tail(node); p >= 0 {
			if piece := t.pieces[p]; strings.HasPrefix(s[k+1:], piece[k+1:]) {
				fn(len(piece), p)
			}
			return
		}
	}
}

// lookup is the id of piece s.
func (t *pieceTrie) lookup(s string) (int, bool) {
	node := int32(0)
	for k := 0; k < len(s); k++ {
		if node = t.child(node, s[k]); node == 0 {
			return 0, false
		}
		if p := t.tail(node); p >= 0 {
			return int(p), s[k+1:] == t.pieces[p][k+1:]
		}
	}
	id := t.nodes[node].id
	return int(id), id >= 0
}
