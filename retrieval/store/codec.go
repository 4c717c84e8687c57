package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/rerankd/rerankd/retrieval/memory"
)

const (
	memMagic     = 'M'
	memVersion   = 1
	memHeaderLen = 8

	vecMagic     = 'V'
	vecVersion   = 1
	vecHeaderLen = 12
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeMemory returns the memory record for m (see the package doc).
func encodeMemory(m memory.Memory) ([]byte, error) {
	payload, err := encodeMemoryJSON(m)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, memHeaderLen+len(payload))
	buf[0], buf[1] = memMagic, memVersion
	binary.LittleEndian.PutUint32(buf[4:8], crc32.Checksum(payload, castagnoli))
	copy(buf[memHeaderLen:], payload)
	return buf, nil
}

// encodeMemoryJSON is the JSON payload of a memory record.
func encodeMemoryJSON(m memory.Memory) ([]byte, error) {
	payload, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode memory: %w", err)
	}
	return payload, nil
}

// decodeMemory parses a memory record. It never panics; every failure wraps
// ErrCorrupt (the caller adds namespace/ID context).
func decodeMemory(b []byte) (memory.Memory, error) {
	var m memory.Memory
	if len(b) < memHeaderLen {
		return m, fmt.Errorf("%w: memory record is %d bytes, shorter than header", ErrCorrupt, len(b))
	}
	if b[0] != memMagic {
		return m, fmt.Errorf("%w: bad memory magic %#x", ErrCorrupt, b[0])
	}
	if b[1] != memVersion {
		return m, fmt.Errorf("%w: unsupported memory record version %d", ErrCorrupt, b[1])
	}
	payload := b[memHeaderLen:]
	if got, want := crc32.Checksum(payload, castagnoli), binary.LittleEndian.Uint32(b[4:8]); got != want {
		return m, fmt.Errorf("%w: memory checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	return decodeMemoryJSON(payload)
}

// decodeMemoryJSON parses a memory record's JSON payload and checks its
// schema version. Every failure wraps ErrCorrupt.
func decodeMemoryJSON(payload []byte) (memory.Memory, error) {
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

// validateVector checks a vector before it is stored.
func validateVector(v []float32, wantDim int) error {
	if len(v) == 0 || len(v) > MaxDimension {
		return fmt.Errorf("%w: vector dimension %d not in 1..%d", ErrInvalid, len(v), MaxDimension)
	}
	if wantDim != 0 && len(v) != wantDim {
		return fmt.Errorf("%w: vector dimension %d, store requires %d", ErrInvalid, len(v), wantDim)
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: vector[%d] is %v", ErrInvalid, i, x)
		}
	}
	return nil
}

// encodeVector returns the binary vector record for v (see the package doc).
func encodeVector(v []float32) []byte {
	buf := make([]byte, vecHeaderLen+4*len(v))
	buf[0], buf[1] = vecMagic, vecVersion
	binary.LittleEndian.PutUint32(buf[4:8], uint32(len(v)))
	payload := buf[vecHeaderLen:]
	for i, x := range v {
		binary.LittleEndian.PutUint32(payload[4*i:], math.Float32bits(x))
	}
	binary.LittleEndian.PutUint32(buf[8:12], crc32.Checksum(payload, castagnoli))
	return buf
}

// decodeVector parses a vector record into a freshly allocated slice (never
// aliasing b, which may be bbolt's mmap). It never panics.
func decodeVector(b []byte) ([]float32, error) {
	if len(b) < vecHeaderLen {
		return nil, fmt.Errorf("%w: vector record is %d bytes, shorter than header", ErrCorrupt, len(b))
	}
	if b[0] != vecMagic {
		return nil, fmt.Errorf("%w: bad vector magic %#x", ErrCorrupt, b[0])
	}
	if b[1] != vecVersion {
		return nil, fmt.Errorf("%w: unsupported vector record version %d", ErrCorrupt, b[1])
	}
	if b[2] != 0 || b[3] != 0 {
		return nil, fmt.Errorf("%w: vector reserved bytes not zero", ErrCorrupt)
	}
	dim := binary.LittleEndian.Uint32(b[4:8])
	if dim == 0 || dim > MaxDimension {
		return nil, fmt.Errorf("%w: vector dimension %d not in 1..%d", ErrCorrupt, dim, MaxDimension)
	}
	payload := b[vecHeaderLen:]
	if uint64(len(payload)) != 4*uint64(dim) {
		return nil, fmt.Errorf("%w: vector payload is %d bytes, dimension %d needs %d",
			ErrCorrupt, len(payload), dim, 4*uint64(dim))
	}
	if got, want := crc32.Checksum(payload, castagnoli), binary.LittleEndian.Uint32(b[8:12]); got != want {
		return nil, fmt.Errorf("%w: vector checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(payload[4*i:]))
	}
	return v, nil
}

// recordErr adds namespace/ID context to a decode error.
func recordErr(kind, ns, id string, err error) error {
	return fmt.Errorf("store: %s %s/%s: %w", kind, ns, id, err)
}

// checkKey verifies a decoded memory belongs under the key it was read from.
func checkKey(m memory.Memory, ns, id string) error {
	if m.Namespace != ns || m.ID != id {
		return fmt.Errorf("%w: record names %q/%q", ErrCorrupt, m.Namespace, m.ID)
	}
	return nil
}
