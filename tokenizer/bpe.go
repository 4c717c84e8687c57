package tokenizer

import "container/heap"

// piece is one BPE output token: its id and how many bytes of the word it
// covers (for offsets).
type piece struct {
	id  int32
	len int32
}

// heapThreshold is the word length (bytes) above which merging uses a heap.
// Below it a linear scan of cached pair ranks is faster; above it the scan's
// quadratic cost would let one long run of letters or spaces stall a request.
const heapThreshold = 128

// bpeWord returns the tokens of one pre-tokenized word (raw bytes).
func (t *Tokenizer) bpeWord(word string) []piece {
	if t.ignoreMerges {
		if id, ok := t.vocab[t.byteLevel(word)]; ok {
			return []piece{{int32(id), int32(len(word))}}
		}
	}
	syms := make([]piece, len(word))
	for i := 0; i < len(word); i++ {
		syms[i] = piece{t.byteID[word[i]], 1}
	}
	if len(syms) > heapThreshold {
		return t.mergeHeap(syms)
	}
	return t.mergeScan(syms)
}

func (t *Tokenizer) byteLevel(word string) string {
	b := make([]byte, 0, 2*len(word))
	for i := 0; i < len(word); i++ {
		b = append(b, t.byteChar[word[i]]...)
	}
	return string(b)
}

const noMerge = int32(1<<31 - 1)

// mergeScan repeatedly merges the lowest-ranked adjacent pair, the leftmost
// one among equal ranks (sugarme breaks that tie wrongly). ranks[i] caches
// the rank of (syms[i], syms[i+1]) so each step costs one scan and two
// lookups.
func (t *Tokenizer) mergeScan(syms []piece) []piece {
	if len(syms) < 2 {
		return syms
	}
	ranks := make([]merge, len(syms)-1)
	for i := range ranks {
		ranks[i] = t.lookup(syms[i].id, syms[i+1].id)
	}
	for len(syms) > 1 {
		best := -1
		bestRank := noMerge
		for i, m := range ranks {
			if m.rank < bestRank {
				best, bestRank = i, m.rank
			}
		}
		if best < 0 {
			break
		}
		syms[best] = piece{ranks[best].id, syms[best].len + syms[best+1].len}
		syms = append(syms[:best+1], syms[best+2:]...)
		ranks = append(ranks[:best], ranks[best+1:]...)
		if best > 0 {
			ranks[best-1] = t.lookup(syms[best-1].id, syms[best].id)
		}
		if best < len(ranks) {
			ranks[best] = t.lookup(syms[best].id, syms[best+1].id)
		}
	}
	return syms
}

func (t *Tokenizer) lookup(a, b int32) merge {
	if m, ok := t.merges[pairKey(a, b)]; ok {
		return m
	}
	return merge{rank: noMerge}
}

// mergeHeap is the reference's algorithm: a priority queue of candidate
// merges ordered by (rank, position), symbols in a linked list, stale queue
// entries skipped when popped. It gives the same result as mergeScan.
func (t *Tokenizer) mergeHeap(syms []piece) []piece {
	n := len(syms)
	prev := make([]int, n)
	nxt := make([]int, n)
	for i := range syms {
		prev[i], nxt[i] = i-1, i+1
	}
	nxt[n-1] = -1
	q := &mergeQueue{}
	push := func(pos int) {
		if m := t.lookup(syms[pos].id, syms[nxt[pos]].id); m.rank != noMerge {
			heap.Push(q, queued{pos: pos, merge: m})
		}
	}
	for i := 0; i < n-1; i++ {
		push(i)
	}
	for q.Len() > 0 {
		top := heap.Pop(q).(queued)
		right := nxt[top.pos]
		if syms[top.pos].len == 0 || right < 0 {
			continue
		}
		if m := t.lookup(syms[top.pos].id, syms[right].id); m != top.merge {
			continue
		}
		syms[top.pos] = piece{top.id, syms[top.pos].len + syms[right].len}
		syms[right].len = 0
		nxt[top.pos] = nxt[right]
		if nxt[right] >= 0 {
			prev[nxt[right]] = top.pos
			push(top.pos)
		}
		if p := prev[top.pos]; p >= 0 {
			push(p)
		}
	}
	out := syms[:0]
	for i := 0; i >= 0; i = nxt[i] {
		out = append(out, syms[i])
	}
	return out
}

type queued struct {
	pos int
	merge
}

type mergeQueue []queued

func (q mergeQueue) Len() int { return len(q) }
func (q mergeQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].pos < q[j].pos
}
func (q mergeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *mergeQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *mergeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
