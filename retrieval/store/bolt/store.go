package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/rerankd/rerankd/retrieval/store"
)

// StoreSchema is the on-disk store format version recorded in the meta bucket.
const StoreSchema = 1

var (
	bucketMeta       = []byte("meta")
	bucketMemories   = []byte("memories")
	bucketEmbeddings = []byte("embeddings")
	bucketVecGen     = []byte("vecgen")
	keySchema        = []byte("schema")
)

// Store is an open store file. It is safe for concurrent use: reads run in
// parallel, writes are serialised by bbolt.
type Store struct {
	db   *bbolt.DB
	opts Options
}

// Open opens (creating if needed) the store file at path. It fails with an
// error wrapping store.ErrIncompatible if the file has a newer format.
func Open(path string, opts Options) (s *Store, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	// bbolt would silently initialise an existing empty file as a new store;
	// an empty file where a store was expected is damage, not a fresh start.
	if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return nil, fmt.Errorf("open %s: %w: the file is empty (truncated?); if it is a new store that never finished creating, delete it", path, store.ErrCorrupt)
	}
	if err := notAStore(path); err != nil {
		return nil, err
	}
	// bbolt panics on some damaged files (a freelist page overwritten), and
	// reading an mmap'd page past the end of a truncated file faults; both
	// are bad input, not programming errors, so they become errors.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("open %s: %w: %v (run `rerankd store check`, then `rerankd store salvage`, or restore a backup)", path, store.ErrCorrupt, r)
		}
	}()
	db, err := bbolt.Open(path, opts.FileMode, &bbolt.Options{
		Timeout:  opts.LockTimeout,
		NoSync:   opts.NoSync,
		ReadOnly: opts.ReadOnly,
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: file is locked by another process (waited %v): %w",
				path, opts.LockTimeout, err)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) { // permissions, missing directory: not damage
			return nil, err // "open PATH: why" already
		}
		return nil, fmt.Errorf("open %s: %w: %w (the file is damaged: run `rerankd store salvage`, or restore a backup)", path, store.ErrCorrupt, err)
	}
	s = &Store{db: db, opts: opts}
	if err := s.checkSize(path); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// checkSize refuses a file shorter than the pages its meta page says it
// has: a truncated file. Without this, the first read of a missing page
// would fault (the file is mmap'd) instead of returning an error.
func (s *Store) checkSize(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	var want int64
	if err := s.db.View(func(tx *bbolt.Tx) error { want = tx.Size(); return nil }); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if fi.Size() < want {
		return fmt.Errorf("open %s: %w: the file is %d bytes but its pages need %d (truncated); run `rerankd store salvage` or restore a backup",
			path, store.ErrCorrupt, fi.Size(), want)
	}
	return nil
}

// init creates the top-level buckets and checks the format version.
func (s *Store) init() error {
	check := func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("%w: missing meta bucket", store.ErrIncompatible)
		}
		v := meta.Get(keySchema)
		if len(v) != 4 {
			return fmt.Errorf("%w: bad schema record", store.ErrIncompatible)
		}
		if got := binary.LittleEndian.Uint32(v); got != StoreSchema {
			return fmt.Errorf("%w: file has format %d, this build supports %d", store.ErrIncompatible, got, StoreSchema)
		}
		return nil
	}
	if s.opts.ReadOnly {
		return s.db.View(func(tx *bbolt.Tx) error {
			if tx.Bucket(bucketMeta) == nil && tx.Bucket(bucketMemories) == nil {
				return nil // empty file: nothing to read
			}
			return check(tx)
		})
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if meta.Get(keySchema) == nil {
			var v [4]byte
			binary.LittleEndian.PutUint32(v[:], StoreSchema)
			if err := meta.Put(keySchema, v[:]); err != nil {
				return err
			}
		}
		for _, name := range [][]byte{bucketMemories, bucketEmbeddings, bucketVecGen} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return check(tx)
	})
}

// Close releases the file. Further calls return store.ErrClosed.
func (s *Store) Close() error {
	return mapErr(s.db.Close())
}

// Path returns the file path.
func (s *Store) Path() string { return s.db.Path() }

// mapErr translates bbolt sentinel errors into this package's.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return fmt.Errorf("%w: %w", store.ErrClosed, err)
	case errors.Is(err, berrors.ErrDatabaseReadOnly), errors.Is(err, berrors.ErrTxNotWritable):
		return fmt.Errorf("store: opened read-only: %w", err)
	}
	return err
}

// view and update run fn in a transaction; damage bbolt trips over
// (see guarded) is an error wrapping store.ErrCorrupt, never a crash.
func (s *Store) view(fn func(tx *bbolt.Tx) error) error {
	return guarded(func() error { return mapErr(s.db.View(fn)) })
}

func (s *Store) update(fn func(tx *bbolt.Tx) error) error {
	return guarded(func() error { return mapErr(s.db.Update(fn)) })
}

// nsBuckets returns a namespace's sub-buckets, or nils if it does not exist.
func nsBuckets(tx *bbolt.Tx, ns string) (mem, emb *bbolt.Bucket) {
	if top := tx.Bucket(bucketMemories); top != nil {
		mem = top.Bucket([]byte(ns))
	}
	if top := tx.Bucket(bucketEmbeddings); top != nil {
		emb = top.Bucket([]byte(ns))
	}
	return mem, emb
}

var _ store.Backend = (*Store)(nil)
