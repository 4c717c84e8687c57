package bolt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/store"
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
	payload, err := store.MarshalMemory(m)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, memHeaderLen+len(payload))
	buf[0], buf[1] = memMagic, memVersion
	binary.LittleEndian.PutUint32(buf[4:8], crc32.Checksum(payload, castagnoli))
	copy(buf[memHeaderLen:], payload)
	return buf, nil
}

// decodeMemory parses a memory record. It never panics; every failure wraps
// store.ErrCorrupt (the caller adds namespace/ID context).
func decodeMemory(b []byte) (memory.Memory, error) {
	payload, err := memPayload(b)
	if err != nil {
		return memory.Memory{}, err
	}
	return store.DecodeMemory(payload)
}

// memPayload checks a memory record's header and checksum and returns its
// JSON payload (aliasing b).
func memPayload(b []byte) ([]byte, error) {
	if len(b) < memHeaderLen {
		return nil, fmt.Errorf("%w: memory record is %d bytes, shorter than header", store.ErrCorrupt, len(b))
	}
	if b[0] != memMagic {
		return nil, fmt.Errorf("%w: bad memory magic %#x", store.ErrCorrupt, b[0])
	}
	if b[1] != memVersion {
		return nil, fmt.Errorf("%w: unsupported memory record version %d", store.ErrCorrupt, b[1])
	}
	payload := b[memHeaderLen:]
	if got, want := crc32.Checksum(payload, castagnoli), binary.LittleEndian.Uint32(b[4:8]); got != want {
		return nil, fmt.Errorf("%w: memory checksum %08x, want %08x", store.ErrCorrupt, got, want)
	}
	return payload, nil
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
		return nil, fmt.Errorf("%w: vector record is %d bytes, shorter than header", store.ErrCorrupt, len(b))
	}
	if b[0] != vecMagic {
		return nil, fmt.Errorf("%w: bad vector magic %#x", store.ErrCorrupt, b[0])
	}
	if b[1] != vecVersion {
		return nil, fmt.Errorf("%w: unsupported vector record version %d", store.ErrCorrupt, b[1])
	}
	if b[2] != 0 || b[3] != 0 {
		return nil, fmt.Errorf("%w: vector reserved bytes not zero", store.ErrCorrupt)
	}
	dim := binary.LittleEndian.Uint32(b[4:8])
	if dim == 0 || dim > store.MaxDimension {
		return nil, fmt.Errorf("%w: vector dimension %d not in 1..%d", store.ErrCorrupt, dim, store.MaxDimension)
	}
	payload := b[vecHeaderLen:]
	if uint64(len(payload)) != 4*uint64(dim) {
		return nil, fmt.Errorf("%w: vector payload is %d bytes, dimension %d needs %d",
			store.ErrCorrupt, len(payload), dim, 4*uint64(dim))
	}
	if got, want := crc32.Checksum(payload, castagnoli), binary.LittleEndian.Uint32(b[8:12]); got != want {
		return nil, fmt.Errorf("%w: vector checksum %08x, want %08x", store.ErrCorrupt, got, want)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(payload[4*i:]))
	}
	return v, nil
}
