package bolt

import (
	"errors"
	"fmt"
	"os"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

// SalvageStats summarises a Salvage run.
type SalvageStats struct {
	// Copied memories (with Vectors of them carrying a vector) and Skipped
	// records that failed to decode or validate.
	Copied, Vectors, Skipped int
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
	err = in.view(func(tx *bbolt.Tx) error {
		memTop, embTop := tx.Bucket(bucketMemories), tx.Bucket(bucketEmbeddings)
		if memTop == nil {
			return fmt.Errorf("%w: no memories bucket", store.ErrCorrupt)
		}
		if progress != nil {
			total = damagedCount(memTop)
		}
		return memTop.ForEachBucket(func(nsKey []byte) error {
			ns := string(nsKey)
			if err := memory.ValidateNamespace(ns); err != nil {
				report(store.Problem{Namespace: ns, Kind: "namespace", Err: err})
				return nil //nolint:nilerr // reported; salvage goes on with the next namespace
			}
			var eb *bbolt.Bucket
			if embTop != nil {
				eb = embTop.Bucket(nsKey)
			}
			return memTop.Bucket(nsKey).ForEach(func(k, v []byte) error {
				if done++; progress != nil && done%progressEvery == 0 {
					progress(done, max(total, done))
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
				st.Copied++
				if it.Vector != nil {
					st.Vectors++
				}
				batch = append(batch, it)
				if len(batch) == salvageBatch {
					return flush()
				}
				return nil
			})
		})
	})
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
