package follow

import (
	"sync"

	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// records keeps a shared-store namespace's memories as its indexes hold
// them, so that a search completes its candidates (text, time, source,
// metadata, vector) without reading the database again: the follower
// receives every record anyway, and a round trip per search would make a
// replica's warm search cost a database query that an embedded store's
// memory-mapped read does not. It changes under space.Mu with the
// indexes; searches read it under its own lock.
type records struct {
	mu    sync.RWMutex
	m     map[string]store.Record
	bytes int64 // estimated: text, source, metadata, vector
}

func recordBytes(r store.Record) int64 {
	m := r.Memory
	b := int64(len(m.ID) + len(m.Text) + len(m.Source) + 4*len(r.Vector) + 96)
	for k, v := range m.Metadata {
		b += int64(len(k) + len(v.Text()) + 32)
	}
	return b
}

func (rs *records) put(r store.Record) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[string]store.Record{}
	}
	if old, ok := rs.m[r.Memory.ID]; ok {
		rs.bytes -= recordBytes(old)
	}
	rs.m[r.Memory.ID] = r
	rs.bytes += recordBytes(r)
}

func (rs *records) delete(id string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if old, ok := rs.m[id]; ok {
		rs.bytes -= recordBytes(old)
		delete(rs.m, id)
	}
}

func (rs *records) size() int64 {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.bytes
}

// Fill completes cands from sp's records, dropping those it does not hold
// (deleted since the lexical or vector stage ran), as the owner's Fill does
// from the store.
func (sp *space) Fill(cands []post.Candidate) ([]post.Candidate, error) {
	rs := &sp.recs
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	out := cands[:0]
	for _, c := range cands {
		r, ok := rs.m[c.ID]
		if !ok {
			continue
		}
		keep.Complete(&c, r, sp.dim)
		out = append(out, c)
	}
	return out, nil
}
