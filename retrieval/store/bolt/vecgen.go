package bolt

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	bbolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
)

const vecGenLen = 16

func encodeVectorGen(g store.VectorGen) []byte {
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, vecGenLen), g.Seq)
	return binary.LittleEndian.AppendUint64(b, g.Stamp)
}

func decodeVectorGen(b []byte) (store.VectorGen, error) {
	if len(b) != vecGenLen {
		return store.VectorGen{}, fmt.Errorf("%w: vector generation record is %d bytes, want %d", store.ErrCorrupt, len(b), vecGenLen)
	}
	return store.VectorGen{Seq: binary.LittleEndian.Uint64(b), Stamp: binary.LittleEndian.Uint64(b[8:])}, nil
}

// bumpVectorGen gives ns a new generation inside tx. A damaged previous
// record is replaced, not an error: the new random stamp differs from
// whatever it held, which is all the generation promises.
func bumpVectorGen(tx *bbolt.Tx, ns []byte) (store.VectorGen, error) {
	b, err := tx.CreateBucketIfNotExists(bucketVecGen)
	if err != nil {
		return store.VectorGen{}, err
	}
	prev, _ := decodeVectorGen(b.Get(ns))
	g := store.VectorGen{Seq: prev.Seq + 1, Stamp: rand.Uint64()}
	for g.Stamp == 0 { // zero Stamp with a zero Seq would read as "none"
		g.Stamp = rand.Uint64()
	}
	return g, b.Put(ns, encodeVectorGen(g))
}

// dropVectorGen removes ns's generation with the namespace itself.
func dropVectorGen(tx *bbolt.Tx, ns []byte) error {
	if b := tx.Bucket(bucketVecGen); b != nil {
		return b.Delete(ns)
	}
	return nil
}

// VectorGen returns ns's current vector generation (zero if none is
// recorded). A damaged record is an error wrapping store.ErrCorrupt.
func (s *Store) VectorGen(ns string) (store.VectorGen, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return store.VectorGen{}, fmt.Errorf("store: %w", err)
	}
	var g store.VectorGen
	err := s.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketVecGen)
		if b == nil {
			return nil
		}
		v := b.Get([]byte(ns))
		if v == nil {
			return nil
		}
		var err error
		g, err = decodeVectorGen(v)
		return err
	})
	if err != nil {
		return store.VectorGen{}, fmt.Errorf("store: vector generation of %s: %w", ns, err)
	}
	return g, nil
}

// VectorGens returns the vector generation of every namespace that has
// one, read in one transaction. Damaged records are left out (their
// namespaces read as zero, which matches no saved index).
func (s *Store) VectorGens() (map[string]store.VectorGen, error) {
	out := map[string]store.VectorGen{}
	err := s.view(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketVecGen)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if g, err := decodeVectorGen(v); err == nil {
				out[string(k)] = g
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: vector generations: %w", err)
	}
	return out, nil
}

// BumpVectorGen gives the existing namespace ns a new vector generation
// without changing its vectors, and returns it. It is for namespaces whose
// generation is zero (written before generations existed), so that an
// index of them can be saved with a generation that later writes will
// change. It fails with store.ErrNotFound when ns has no memories.
func (s *Store) BumpVectorGen(ns string) (store.VectorGen, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return store.VectorGen{}, fmt.Errorf("store: %w", err)
	}
	var g store.VectorGen
	err := s.update(func(tx *bbolt.Tx) error {
		if mb, _ := nsBuckets(tx, ns); mb == nil {
			return store.ErrNotFound
		}
		var err error
		g, err = bumpVectorGen(tx, []byte(ns))
		return err
	})
	if err != nil {
		return store.VectorGen{}, fmt.Errorf("store: bump vector generation of %s: %w", ns, err)
	}
	return g, nil
}
