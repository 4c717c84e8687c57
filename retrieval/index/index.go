package index

import (
	"fmt"
	"strconv"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/memory"
)

// VectorIndex is what a Set needs from an approximate nearest neighbour
// index; retrieval/hnsw's implementations satisfy it. Vectors are
// normalised by the index; Add refuses zero vectors and wrong dimensions.
type VectorIndex interface {
	Add(id string, vec []float32) error
	Delete(id string) bool
	Search(vec []float32, k int) ([]hnsw.Hit, error)
	// SearchIDs is the exact k nearest among the vectors of ids, and
	// SearchFiltered the approximate k nearest among those allow
	// accepts: a filtered search (see Set.SearchVectors).
	SearchIDs(vec []float32, k int, ids []string) ([]hnsw.Hit, error)
	SearchFiltered(vec []float32, k int, allow func(string) bool) ([]hnsw.Hit, error)
	Len() int
	// Has reports whether id is in the index; a check compares the index
	// with the store ID by ID, not only by count.
	Has(id string) bool
}

// Config says how a Set indexes memories.
type Config struct {
	// BM25 configures the lexical index.
	BM25 bm25.Config
	// Vectors configures the vector index; a Dim of 0 means the Set has
	// none.
	Vectors hnsw.Config
	// SpeakerKey is the metadata key whose value is a memory's speaker
	// field ("" for none).
	SpeakerKey string
}

// Set is one namespace's indexes: BM25 over text, speaker and time
// fields, each source's time order (for the context stage), and the
// vector index. Writers of a Set are serialised by its owner (one
// namespace lock); readers need no lock, every index is concurrent.
type Set struct {
	Lex   *bm25.Index
	Order *Order
	Vec   VectorIndex // nil when the memory service has no vector dimension

	attrs *attrs // what filters read, by ID

	speakerKey string
	dim        int
}

// New returns an empty Set.
func New(cfg Config) (*Set, error) {
	lex, err := bm25.New(cfg.BM25)
	if err != nil {
		return nil, err
	}
	s := &Set{Lex: lex, Order: NewOrder(), attrs: newAttrs(), speakerKey: cfg.SpeakerKey, dim: cfg.Vectors.Dim}
	if s.dim > 0 {
		if s.Vec, err = hnsw.New(cfg.Vectors); err != nil {
			return nil, fmt.Errorf("index: vector index: %w", err)
		}
	}
	return s, nil
}

// WithVectors returns a Set sharing s's lexical indexes with vec as its
// vector index (one loaded from a snapshot).
func (s *Set) WithVectors(vec VectorIndex) *Set {
	c := *s
	c.Vec = vec
	return &c
}

// Put indexes m's current state with its vector, replacing any earlier
// state of its ID. A vector the index cannot hold (none, zero, another
// dimension) leaves m lexical-only. The error is the vector index's
// refusal of a vector embed.Check accepted: the lexical indexes hold m
// anyway, and the caller's store has the vector, so the Set disagrees
// with the store until rebuilt.
func (s *Set) Put(m memory.Memory, vec []float32) error {
	s.PutText(m)
	return s.PutVector(m.ID, vec)
}

// PutText indexes m's text and fields, and its place in its source.
func (s *Set) PutText(m memory.Memory) {
	s.Lex.AddFields(m.ID, m.Text, s.fields(m))
	s.Order.Add(m.ID, m.Source, m.Time)
	s.attrs.put(m)
}

// PutVector replaces id's vector (see Put).
func (s *Set) PutVector(id string, vec []float32) error {
	if s.Vec == nil {
		return nil
	}
	s.Vec.Delete(id)
	if !s.indexable(vec) {
		return nil
	}
	return s.Vec.Add(id, vec)
}

// indexable reports whether vec can go into the vector index: embed.Check's
// rule, the one every write, build and query vector passes.
func (s *Set) indexable(vec []float32) bool { return embed.Check(vec, s.dim) == nil }

// Remove forgets id in every index.
func (s *Set) Remove(id string) {
	s.Lex.Delete(id)
	s.Order.Delete(id)
	s.attrs.remove(id)
	if s.Vec != nil {
		s.Vec.Delete(id)
	}
}

// Bytes estimates the Set's memory, for a memory budget.
func (s *Set) Bytes() int64 {
	const perOrder = 96   // source order entry: key, map entry
	const perVector = 320 // HNSW node: neighbour lists, map entries
	const perRange = 48   // a sorted time or number: entry, B-tree share
	n := int64(s.Lex.Len())
	b := s.Lex.Bytes() + n*perOrder
	s.attrs.mu.RLock()
	b += int64(s.attrs.rg.len()) * perRange
	s.attrs.mu.RUnlock()
	if s.Vec != nil {
		b += int64(s.Vec.Len()) * (int64(s.dim)*4 + perVector)
	}
	return b
}

// exactBelow is the allowed-set size under which a filtered vector search
// scans the allowed vectors exactly instead of walking the graph; a tenth
// of the index when that is more (a scan of a tenth costs less than the
// wide beam a sparse filter needs).
const exactBelow = 4096

// SearchVectors returns the k nearest vectors to q among the memories
// allowed accepts (nil: all): an exact scan of the allowed vectors when
// they are few, the graph search with an allow-list otherwise.
func (s *Set) SearchVectors(q []float32, k int, allowed *Allowed) ([]hnsw.Hit, error) {
	switch {
	case allowed == nil:
		return s.Vec.Search(q, k)
	case allowed.Len() == 0:
		return nil, nil
	case allowed.Len() <= max(exactBelow, s.Vec.Len()/10):
		return s.Vec.SearchIDs(q, k, allowed.IDs)
	}
	return s.Vec.SearchFiltered(q, k, allowed.Has)
}

// Field numbers in bm25.Fields.
const (
	FieldSpeaker = 0
	FieldTime    = 1
)

// fields returns m's speaker and time fields for the BM25 index.
func (s *Set) fields(m memory.Memory) bm25.Fields {
	var f bm25.Fields
	if k := s.speakerKey; k != "" {
		if v, _ := m.Metadata[k].Str(); v != "" {
			f[FieldSpeaker] = s.Lex.Analyzer().Terms(v)
		}
	}
	f[FieldTime] = TimeTerms(m)
	return f
}

// Time terms. They start with '@', which no analysed term contains, so
// they never meet a text term: "@y2023" (year), "@m10" (month),
// "@d10-13" (month and day, any year). A query's dates are read into the
// same terms.

// YearTerm is the time term of a year.
func YearTerm(y int) string { return "@y" + strconv.Itoa(y) }

// MonthTerm is the time term of a month (1..12).
func MonthTerm(m int) string { return "@m" + strconv.Itoa(m) }

// DayTerm is the time term of a day of a month, any year.
func DayTerm(m, d int) string { return "@d" + strconv.Itoa(m) + "-" + strconv.Itoa(d) }

// TimeTerms are the time field of m: none when it has no time.
func TimeTerms(m memory.Memory) []string {
	if m.Time.IsZero() {
		return nil
	}
	y, mo, d := m.Time.Date()
	return []string{YearTerm(y), MonthTerm(int(mo)), DayTerm(int(mo), d)}
}
