package retrieval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// VectorStatus says what happened to an added memory's vector.
type VectorStatus string

const (
	// VectorIndexed means the memory is in the vector index.
	VectorIndexed VectorStatus = "indexed"
	// VectorNone means no vector (no embedder and none supplied); lexical only.
	VectorNone VectorStatus = "none"
	// VectorZero means the vector has no direction (all zeros, or a norm at
	// most embed.MinNorm), refused for the vector index; the memory is
	// stored without it and searchable lexically.
	VectorZero VectorStatus = "zero_refused"
)

// Added reports one stored memory.
type Added struct {
	Namespace string
	ID        string
	Vector    VectorStatus
}

// MaxBatch bounds one Add call, so one request cannot hold the write lock
// of the store for long.
const MaxBatch = keep.MaxBatch

// Add stores items durably, in one transaction (all or none), then indexes
// them. Items without a vector are embedded when the service has an
// Embedder. Every invalid item is reported at once, wrapped in ErrInvalid,
// and nothing is written. When Add returns nil every item is durable, even
// if the process dies before the indexes are updated.
func (s *Service) Add(ctx context.Context, items []store.Item) ([]Added, error) {
	if s.b.Closed() {
		return nil, ErrClosed
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: no memories to add", ErrInvalid)
	}
	if len(items) > MaxBatch {
		return nil, fmt.Errorf("%w: %d memories in one batch, at most %d", ErrInvalid, len(items), MaxBatch)
	}
	items = slices.Clone(items)
	if err := s.validateItems(items); err != nil {
		return nil, err
	}
	if err := s.embedMissing(ctx, items); err != nil {
		return nil, err
	}
	out := make([]Added, len(items))
	for i := range items {
		out[i] = Added{Namespace: items[i].Memory.Namespace, ID: items[i].Memory.ID, Vector: VectorNone}
		if items[i].Vector != nil {
			if embed.Check(items[i].Vector, s.b.Dim()) == nil {
				out[i].Vector = VectorIndexed
			} else {
				items[i].Vector, out[i].Vector = nil, VectorZero
			}
		}
	}

	err := s.k.Write(ctx, items, func() error {
		if err := s.b.Store().PutBatch(items); err != nil {
			return addErr(err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// addErr classifies a failed PutBatch: nothing was acknowledged.
func addErr(err error) error {
	switch {
	case errors.Is(err, store.ErrInvalid):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, store.ErrIncompatible):
		return fmt.Errorf("retrieval: add: %w: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("retrieval: add: %w: %w", ErrStorage, err)
}

// validateItems normalises and checks every item, reporting all problems.
func (s *Service) validateItems(items []store.Item) error {
	var errs []error
	for i := range items {
		m := items[i].Memory.Normalize()
		items[i].Memory = m
		if err := m.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("memory %d: %w", i, err))
		}
		if v := items[i].Vector; v != nil {
			if err := s.checkVector(v); err != nil {
				errs = append(errs, fmt.Errorf("memory %d: %w", i, err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
}

// checkVector checks a client-supplied or embedded vector by embed.Check:
// the wrong dimension or a NaN/Inf value is an error; a zero vector (norm
// at most embed.MinNorm) is not, it is stored without a vector and
// answered VectorZero.
func (s *Service) checkVector(v []float32) error {
	if s.b.Dim() == 0 {
		return ErrNoVectors
	}
	if err := embed.Check(v, s.b.Dim()); err != nil && !errors.Is(err, embed.ErrZeroVector) {
		return err
	}
	return nil
}

// embedMissing fills in the vectors of items that have none, in one call.
func (s *Service) embedMissing(ctx context.Context, items []store.Item) error {
	if s.b.Embedder() == nil {
		return nil
	}
	var idx []int
	var texts []string
	for i, it := range items {
		if it.Vector == nil {
			idx = append(idx, i)
			texts = append(texts, it.Memory.Text)
		}
	}
	if len(texts) == 0 {
		return nil
	}
	vecs, err := s.b.Embedder().Embed(ctx, texts, false)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrEmbed, err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("%w: embedder returned %d vectors for %d texts", ErrEmbed, len(vecs), len(texts))
	}
	for k, i := range idx {
		if err := s.checkVector(vecs[k]); err != nil {
			return fmt.Errorf("%w: %w", ErrEmbed, err)
		}
		items[i].Vector = vecs[k]
	}
	return nil
}

// Delete removes ns/id durably, then from the indexes. It returns an error
// wrapping ErrNotFound when there is no such memory.
func (s *Service) Delete(ns, id string) error {
	if s.b.Closed() {
		return ErrClosed
	}
	if err := keysValid(ns, id); err != nil {
		return err
	}
	return s.k.Remove(ns, id, func() error {
		if err := s.b.Store().Delete(ns, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("memory %s/%s: %w", ns, id, ErrNotFound)
			}
			return mapStoreErr(err)
		}
		return nil
	})
}

// Patch is a partial update of a memory: each non-nil field replaces the
// memory's; Metadata is merged key by key, a key without a value
// (memory.Value{}, JSON null) removing it.
type Patch struct {
	Text     *string
	Time     *time.Time
	Source   *string
	Metadata memory.Metadata
	// Vector replaces the embedding. Without it, a changed text is
	// embedded again (by the Embedder; without one the memory loses its
	// vector, which described the old text), and an unchanged text keeps
	// its vector.
	Vector []float32
}

// Update applies p to ns/id and writes the result as Add does (durable,
// then indexed; visible to the next search on every replica). It returns
// an error wrapping ErrNotFound when there is no such memory. Two updates
// of one memory at once: the last to write wins whole.
func (s *Service) Update(ctx context.Context, ns, id string, p Patch) (Added, error) {
	rec, err := s.Get(ns, id)
	if err != nil {
		return Added{}, err
	}
	m, vec := rec.Memory, rec.Vector
	if p.Text != nil && *p.Text != m.Text {
		m.Text, vec = *p.Text, nil
	}
	if p.Time != nil {
		m.Time = *p.Time
	}
	if p.Source != nil {
		m.Source = *p.Source
	}
	if len(p.Metadata) > 0 {
		md := make(memory.Metadata, len(m.Metadata)+len(p.Metadata))
		maps.Copy(md, m.Metadata)
		for k, v := range p.Metadata {
			if v.Kind() == memory.KindNone {
				delete(md, k)
			} else {
				md[k] = v
			}
		}
		if len(md) == 0 {
			md = nil
		}
		m.Metadata = md
	}
	if p.Vector != nil {
		vec = p.Vector
	}
	m.SchemaVersion = 0 // written in this build's schema
	added, err := s.Add(ctx, []store.Item{{Memory: m, Vector: vec}})
	if err != nil {
		return Added{}, err
	}
	return added[0], nil
}

// Forget deletes every memory of ns durably, with its vectors, vector
// generation and vector index snapshot, then empties its indexes; it
// returns how many memories ns held (0 for a namespace never written).
// Over a shared store every replica's indexes learn of each delete before
// their next search.
func (s *Service) Forget(ns string) (int, error) {
	if s.b.Closed() {
		return 0, ErrClosed
	}
	if err := memory.ValidateNamespace(ns); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return s.k.Forget(ns, func() (int, error) {
		n, err := s.b.Store().DeleteNamespace(ns)
		if err != nil {
			return 0, mapStoreErr(err)
		}
		return n, nil
	})
}

// Namespace is one namespace and how many memories it holds.
type Namespace struct {
	Name     string
	Memories int
}

// Namespaces lists the namespaces holding memories that allow accepts
// (nil: all), sorted, with their counts.
func (s *Service) Namespaces(allow func(string) bool) ([]Namespace, error) {
	names, err := s.b.Store().Namespaces()
	if err != nil {
		return nil, mapStoreErr(err)
	}
	out := make([]Namespace, 0, len(names))
	for _, ns := range names {
		if allow != nil && !allow(ns) {
			continue
		}
		n, err := s.b.Store().Count(ns)
		if err != nil {
			return nil, mapStoreErr(err)
		}
		if n > 0 {
			out = append(out, Namespace{Name: ns, Memories: n})
		}
	}
	return out, nil
}

// Get returns ns/id with its vector (nil if none).
func (s *Service) Get(ns, id string) (store.Record, error) {
	if err := keysValid(ns, id); err != nil {
		return store.Record{}, err
	}
	recs, err := s.b.Store().GetMany(ns, []string{id}, true)
	if err != nil {
		return store.Record{}, mapStoreErr(err)
	}
	if len(recs) == 0 {
		return store.Record{}, fmt.Errorf("memory %s/%s: %w", ns, id, ErrNotFound)
	}
	return recs[0], nil
}

// List returns up to limit memories of ns after the ID `after`, in ID
// order, with their vectors, and the cursor for the next page ("" at the
// end). With a filter f only matching memories are returned, limit of
// them unless the end is reached: the filter's indexes name the matching
// memories when the namespace's indexes are built (see listIndexed);
// otherwise the store is read page by page until limit match or it ends,
// and the cursor is the last memory read.
func (s *Service) List(ns, after string, limit int, f *filter.Matcher) ([]store.Record, string, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if f == nil {
		recs, next, err := s.b.Store().Page(ns, after, limit, true)
		if err != nil {
			return nil, "", mapStoreErr(err)
		}
		return recs, next, nil
	}
	if recs, next, ok, err := s.listIndexed(ns, after, limit, f); ok || err != nil {
		return recs, next, err
	}
	return s.listScan(ns, after, limit, f)
}

// listScan is List with a filter, from the store alone.
func (s *Service) listScan(ns, after string, limit int, f *filter.Matcher) ([]store.Record, string, error) {
	var out []store.Record
	for {
		recs, next, err := s.b.Store().Page(ns, after, limit, true)
		if err != nil {
			return nil, "", mapStoreErr(err)
		}
		for i, r := range recs {
			if f.Match(filter.Of(r.Memory)) {
				out = append(out, r)
				if len(out) == limit {
					if i == len(recs)-1 {
						return out, next, nil
					}
					return out, r.Memory.ID, nil
				}
			}
		}
		if next == "" {
			return out, "", nil
		}
		after = next
	}
}

// listIndexed is List with a filter, from ns's indexes: the IDs the
// filter's allow-list holds after `after`, in ID order, then their records
// from the store, each matched again (a memory changed since the indexes
// answered is judged by its stored state; one deleted is skipped). The
// cursor is the last memory returned while matching IDs remain. ok is
// false when ns's indexes are not built (during a start-up build, or a
// shared namespace's first build) or cannot be brought up to date now, or
// when at least 1/listDense of the namespace matches: the caller reads
// the store.
func (s *Service) listIndexed(ns, after string, limit int, f *filter.Matcher) (_ []store.Record, next string, ok bool, _ error) {
	if s.b.Closed() {
		return nil, "", false, ErrClosed
	}
	sp, err := s.k.Open(context.Background(), ns)
	switch {
	case errors.Is(err, ErrUnavailable):
		// Indexes that cannot answer now (a replica still catching up
		// with the shared store, say) are no reason to fail a listing:
		// the store can.
		return nil, "", false, nil
	case err != nil:
		return nil, "", false, err
	case sp == nil || !sp.LexReady():
		return nil, "", false, nil
	}
	allowed := sp.Indexes().Allowed(f)
	if allowed.Len() >= allowed.Live/listDense {
		// Many memories match: a page of the store holds an eighth of
		// its size in matches or more, cheaper than sorting them all.
		return nil, "", false, nil
	}
	var ids []string
	for _, id := range allowed.IDs {
		if id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	out := make([]store.Record, 0, min(limit, len(ids)))
	for len(ids) > 0 && len(out) < limit {
		chunk := ids[:min(len(ids), limit-len(out))]
		ids = ids[len(chunk):]
		recs, err := s.b.Store().GetMany(ns, chunk, true)
		if err != nil {
			return nil, "", false, mapStoreErr(err)
		}
		for _, r := range recs {
			if f.Match(filter.Of(r.Memory)) {
				out = append(out, r)
			}
		}
	}
	if len(ids) > 0 && len(out) > 0 {
		next = out[len(out)-1].Memory.ID
	}
	return out, next, true, nil
}

// listDense: a filtered listing reads the store page by page when at
// least 1/listDense of the namespace's memories match (a page of the
// store then holds about limit/listDense matches or more).
const listDense = 8

func keysValid(ns, id string) error {
	if err := memory.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := memory.ValidateID(id); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}
