package store

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/rerankd/rerankd/retrieval/memory"
)

// The functions below are the rules every Backend applies, so that both
// validate and encode the same way.

// ValidateVector checks a vector before it is stored: dimension in
// 1..MaxDimension, equal to dim when dim is non-zero, every element finite.
// Errors wrap ErrInvalid.
func ValidateVector(v []float32, dim int) error {
	if len(v) == 0 || len(v) > MaxDimension {
		return fmt.Errorf("%w: vector dimension %d not in 1..%d", ErrInvalid, len(v), MaxDimension)
	}
	if dim != 0 && len(v) != dim {
		return fmt.Errorf("%w: vector dimension %d, store requires %d", ErrInvalid, len(v), dim)
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: vector[%d] is %v", ErrInvalid, i, x)
		}
	}
	return nil
}

// ValidateKeys checks a namespace and an ID as every method taking them
// does; errors wrap ErrInvalid.
func ValidateKeys(ns, id string) error {
	if err := memory.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := memory.ValidateID(id); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// MarshalMemory is the JSON encoding of m that a memory record holds. m
// should be normalised and valid; an encoding failure (a time outside
// years 0..9999) is an error.
func MarshalMemory(m memory.Memory) ([]byte, error) {
	payload, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode memory: %w", err)
	}
	return payload, nil
}

// UnmarshalMemory decodes JSON written by MarshalMemory, read from the key
// ns/id: it checks the schema version and that the memory names that key.
// Errors wrap ErrCorrupt and name ns/id.
func UnmarshalMemory(b []byte, ns, id string) (memory.Memory, error) {
	m, err := DecodeMemory(b)
	if err == nil && (m.Namespace != ns || m.ID != id) {
		err = fmt.Errorf("%w: record names %q/%q", ErrCorrupt, m.Namespace, m.ID)
	}
	if err != nil {
		return memory.Memory{}, RecordErr("memory", ns, id, err)
	}
	return m, nil
}

// RecordErr adds namespace/ID context to a decode error of a record of
// the given kind ("memory", "vector").
func RecordErr(kind, ns, id string, err error) error {
	return fmt.Errorf("store: %s %s/%s: %w", kind, ns, id, err)
}

// DecodeMemory parses JSON written by MarshalMemory and checks its schema
// version, without the key check of UnmarshalMemory. Every failure wraps
// ErrCorrupt.
func DecodeMemory(payload []byte) (memory.Memory, error) {
	var m memory.Memory
	if err := json.Unmarshal(payload, &m); err != nil {
		return memory.Memory{}, fmt.Errorf("%w: memory JSON: %w", ErrCorrupt, err)
	}
	if m.SchemaVersion < 1 || m.SchemaVersion > memory.CurrentSchema {
		return memory.Memory{}, fmt.Errorf("%w: memory schema version %d not in 1..%d",
			ErrCorrupt, m.SchemaVersion, memory.CurrentSchema)
	}
	return m, nil
}
