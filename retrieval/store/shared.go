package store

import "github.com/rerankd/rerankd/retrieval/memory"

// The functions below are the rules of this package offered to the other
// backends (retrieval/store/pgstore), so that every Backend validates and
// encodes the same way.

// ValidateVector checks a vector before it is stored: dimension in
// 1..MaxDimension, equal to dim when dim is non-zero, every element finite.
// Errors wrap ErrInvalid.
func ValidateVector(v []float32, dim int) error { return validateVector(v, dim) }

// MarshalMemory is the JSON encoding of m that a memory record holds (the
// payload of this package's record format). m should be normalised and
// valid; an encoding failure (a time outside years 0..9999) is an error.
func MarshalMemory(m memory.Memory) ([]byte, error) { return encodeMemoryJSON(m) }

// UnmarshalMemory decodes JSON written by MarshalMemory, read from the key
// ns/id: it checks the schema version and that the memory names that key.
// Errors wrap ErrCorrupt and name ns/id.
func UnmarshalMemory(b []byte, ns, id string) (memory.Memory, error) {
	m, err := decodeMemoryJSON(b)
	if err == nil {
		err = checkKey(m, ns, id)
	}
	if err != nil {
		return memory.Memory{}, recordErr("memory", ns, id, err)
	}
	return m, nil
}

// ValidateKeys checks a namespace and an ID as every method taking them
// does; errors wrap ErrInvalid.
func ValidateKeys(ns, id string) error { return validateKeys(ns, id) }
