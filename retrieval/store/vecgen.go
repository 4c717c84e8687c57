package store

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	bolt "go.etcd.io/bbolt"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// VectorGen identifies one state of a namespace's vectors. Every write
// that changes them (a vector stored, or one removed by a Put without a
// vector or by Delete) gives the namespace a new VectorGen in the same
// transaction, so an index saved with the VectorGen it was built at is
// exactly the store's vectors as long as the namespace still has that
// VectorGen. The zero VectorGen means "none recorded": the namespace has
// had no vector write since generations were introduced (or has none).
type VectorGen struct {
	// Seq counts the changes, for people reading logs. It restarts when
	// the namespace is deleted, so it alone cannot identify a state.
	Seq uint64
	// Stamp is drawn at random at every change. It is what makes equal
	// VectorGens mean equal vectors even when Seq repeats: a namespace
	// deleted and re-created, or an older copy of the store file restored
	// from a backup and written to again.
	Stamp uint64
}

// IsZero reports whether g is the zero VectorGen (none recorded).
func (g VectorGen) IsZero() bool { return g == VectorGen{} }

func (g VectorGen) String() string { return fmt.Sprintf("%d/%016x", g.Seq, g.Stamp) }

const vecGenLen = 16

func (g VectorGen) encode() []byte {
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, vecGenLen), g.Seq)
	return binary.LittleEndian.AppendUint64(b, g.Stamp)
}

func decodeVectorGen(b []byte) (VectorGen, error) {
	if len(b) != vecGenLen {
		return VectorGen{}, fmt.Errorf("%w: vector generation record is %d bytes, want %d", ErrCorrupt, len(b), vecGenLen)
	}
	return VectorGen{Seq: binary.LittleEndian.Uint64(b), Stamp: binary.LittleEndian.Uint64(b[8:])}, nil
}

// bumpVectorGen gives ns a new generation inside tx. A damaged previous
// record is replaced, not an error: the new random stamp differs from
// whatever it held, which is all the generation promises.
func bumpVectorGen(tx *bolt.Tx, ns []byte) (VectorGen, error) {
	b, err := tx.CreateBucketIfNotExists(bucketVecGen)
	if err != nil {
		return VectorGen{}, err
	}
	prev, _ := decodeVectorGen(b.Get(ns))
	g := VectorGen{Seq: prev.Seq + 1, Stamp: rand.Uint64()}
	for g.Stamp == 0 { // zero Stamp with a zero Seq would read as "none"
		g.Stamp = rand.Uint64()
	}
	return g, b.Put(ns, g.encode())
}

// dropVectorGen removes ns's generation with the namespace itself.
func dropVectorGen(tx *bolt.Tx, ns []byte) error {
	if b := tx.Bucket(bucketVecGen); b != nil {
		return b.Delete(ns)
	}
	return nil
}

// VectorGen returns ns's current vector generation (zero if none is
// recorded). A damaged record is an error wrapping ErrCorrupt.
func (s *Store) VectorGen(ns string) (VectorGen, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return VectorGen{}, fmt.Errorf("store: %w", err)
	}
	var g VectorGen
	err := s.view(func(tx *bolt.Tx) error {
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
		return VectorGen{}, fmt.Errorf("store: vector generation of %s: %w", ns, err)
	}
	return g, nil
}

// VectorGens returns the vector generation of every namespace that has
// one, read in one transaction. Damaged records are left out (their
// namespaces read as zero, which matches no saved index).
func (s *Store) VectorGens() (map[string]VectorGen, error) {
	out := map[string]VectorGen{}
	err := s.view(func(tx *bolt.Tx) error {
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
// change. It fails with ErrNotFound when ns has no memories.
func (s *Store) BumpVectorGen(ns string) (VectorGen, error) {
	if err := memory.ValidateNamespace(ns); err != nil {
		return VectorGen{}, fmt.Errorf("store: %w", err)
	}
	var g VectorGen
	err := s.update(func(tx *bolt.Tx) error {
		if mb, _ := nsBuckets(tx, ns); mb == nil {
			return ErrNotFound
		}
		var err error
		g, err = bumpVectorGen(tx, []byte(ns))
		return err
	})
	if err != nil {
		return VectorGen{}, fmt.Errorf("store: bump vector generation of %s: %w", ns, err)
	}
	return g, nil
}
