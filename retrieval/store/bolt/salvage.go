package bolt

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// SalvageStats summarises a Salvage run.
type SalvageStats struct {
	// Copied memories (with Vectors of them carrying a vector) and Skipped
	// records that failed to decode or validate, or pages that did.
	Copied, Vectors, Skipped int
	// FromPages of the copied memories were found by reading the file's
	// pages after bbolt's walk could not reach them (a damaged page above).
	FromPages int
}

// salvageBatch is how many records Salvage writes per transaction.
const salvageBatch = 1000

// Salvage copies every memory of the store file src that decodes and
// validates, with its vector when that decodes too, into a new store file
// dst, and calls fn for every record it leaves behind. src is opened
// read-only and never modified; dst must not exist. This is the recovery
// path when Check reports corrupt records: valid records are never lost,
// and the corrupt ones are named. A file bbolt itself cannot open (its
// meta pages destroyed, or truncated below them) cannot be salvaged this
// way; Salvage says so.
func Salvage(src, dst string, fn func(store.Problem)) (SalvageStats, error) {
	return SalvageProgress(src, dst, fn, nil)
}

// SalvageProgress is Salvage that also calls progress (if non-nil) with the
// memory records walked so far and their total, every progressEvery
// records and once at the end with done == total. The total comes from the
// buckets' statistics; on a file too damaged for them it is -1 (unknown)
// until the end.
func SalvageProgress(src, dst string, fn func(store.Problem), progress func(done, total int64)) (SalvageStats, error) {
	var st SalvageStats
	var done, total int64
	if _, err := os.Stat(dst); err == nil {
		return st, fmt.Errorf("store: salvage: %s exists; choose a new file", dst)
	}
	in, err := openForSalvage(src)
	if err != nil {
		return st, err
	}
	defer func() { _ = in.Close() }() // read-only
	out, err := Open(dst, Options{})
	if err != nil {
		return st, fmt.Errorf("store: salvage: %w", err)
	}
	report := func(p store.Problem) {
		st.Skipped++
		if fn != nil {
			fn(p)
		}
	}
	var batch []store.Item
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := out.PutBatch(batch)
		batch = batch[:0]
		return err
	}
	copied := map[nsID]bool{}
	keep := func(it store.Item) error {
		copied[nsID{it.Memory.Namespace, it.Memory.ID}] = true
		st.Copied++
		if it.Vector != nil {
			st.Vectors++
		}
		batch = append(batch, it)
		if len(batch) == salvageBatch {
			return flush()
		}
		return nil
	}
	// First bbolt's tree walk, namespace by namespace: a damaged page
	// stops the walk of its namespace only (guarded), and is reported.
	var nsKeys [][]byte
	werr := in.view(func(tx *bbolt.Tx) error {
		memTop := tx.Bucket(bucketMemories)
		if memTop == nil {
			return fmt.Errorf("%w: no memories bucket", store.ErrCorrupt)
		}
		if progress != nil {
			total = damagedCount(memTop)
		}
		return memTop.ForEachBucket(func(nsKey []byte) error {
			nsKeys = append(nsKeys, append([]byte(nil), nsKey...))
			return nil
		})
	})
	if werr != nil {
		report(store.Problem{Kind: "page", Err: werr})
	}
	for _, nsKey := range nsKeys {
		ns := string(nsKey)
		if err := memory.ValidateNamespace(ns); err != nil {
			report(store.Problem{Namespace: ns, Kind: "namespace", Err: err})
			continue
		}
		werr := in.view(func(tx *bbolt.Tx) error {
			var eb *bbolt.Bucket
			if embTop := tx.Bucket(bucketEmbeddings); embTop != nil {
				eb = embTop.Bucket(nsKey)
			}
			return tx.Bucket(bucketMemories).Bucket(nsKey).ForEach(func(k, v []byte) error {
				if done++; progress != nil && done%progressEvery == 0 {
					progress(done, max(total, done))
				}
				if copied[nsID{ns, string(k)}] {
					return nil
				}
				m, err := decodeMemoryAt(v, ns, string(k))
				if err == nil {
					err = m.Validate()
				}
				if err != nil {
					report(store.Problem{Namespace: ns, ID: string(k), Kind: "memory", Err: err})
					return nil //nolint:nilerr // reported; salvage goes on with the next record
				}
				it := store.Item{Memory: m}
				if eb != nil {
					if raw := eb.Get(k); raw != nil {
						if it.Vector, err = decodeVector(raw); err != nil {
							it.Vector = nil
							report(store.Problem{Namespace: ns, ID: string(k), Kind: "vector", Err: err})
						}
					}
				}
				return keep(it)
			})
		})
		if werr != nil && !errors.Is(werr, store.ErrCorrupt) {
			err = werr // the destination failed
			break
		}
		if werr != nil {
			report(store.Problem{Namespace: ns, Kind: "page", Err: werr})
		}
	}
	// Then every leaf page in use, read without bbolt: the records a
	// damaged branch page or bucket hid from the walk.
	if err == nil {
		found, serr := scanPages(src)
		if serr != nil {
			report(store.Problem{Kind: "page", Err: fmt.Errorf("page scan: %w", serr)})
		}
		for _, id := range found.damaged {
			report(store.Problem{Kind: "page", Err: fmt.Errorf("%w: page %d is damaged; its intact records were kept", store.ErrCorrupt, id)})
		}
		if len(found.mems) > 0 && !found.freeKnown {
			report(store.Problem{Kind: "page", Err: fmt.Errorf("%w: the freelist is unreadable: older copies of rewritten or deleted memories may be among those recovered", store.ErrCorrupt)})
		}
		for _, k := range sortedKeys(found.mems) {
			if copied[k] {
				continue
			}
			st.FromPages++
			if err = keep(store.Item{Memory: found.mems[k], Vector: found.vector(k)}); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = flush()
	}
	if progress != nil && err == nil {
		progress(done, done)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return st, fmt.Errorf("store: salvage %s: %w", src, err)
	}
	return st, nil
}

// openForSalvage opens src read-only, turning bbolt's refusals (and, for
// files damaged below its meta pages, its panics) into an error.
func openForSalvage(src string) (s *Store, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%w: store: %s cannot be opened at all (%v); its meta pages are damaged — restore it from a backup", store.ErrCorrupt, src, r)
		}
	}()
	s, err = Open(src, Options{ReadOnly: true})
	if err != nil {
		if errors.Is(err, store.ErrIncompatible) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w (bbolt cannot open the file; if it was truncated or its first pages overwritten, restore it from a backup)", store.ErrCorrupt, err)
	}
	return s, nil
}

// damagedCount is recordCount on a file that may be damaged: bbolt panics
// on some broken pages, and then the total is unknown (-1).
func damagedCount(top *bbolt.Bucket) (n int64) {
	defer func() {
		if recover() != nil {
			n = -1
		}
	}()
	return recordCount(top)
}

func sortedKeys(m map[nsID]memory.Memory) []nsID {
	keys := make([]nsID, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b nsID) int { return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.id, b.id)) })
	return keys
}
