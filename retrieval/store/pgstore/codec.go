package pgstore

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rerankd/rerankd/retrieval/store"
)

// encodeVector is the vector column: float32 little-endian, nothing else
// (PostgreSQL checksums its pages when asked to; the length is the
// dimension).
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector reads a vector column into a new slice; a length that is
// not a whole dimension in 1..store.MaxDimension is ErrCorrupt naming
// ns/id.
func decodeVector(b []byte, ns, id string) ([]float32, error) {
	if len(b)%4 != 0 || len(b) == 0 || len(b)/4 > store.MaxDimension {
		return nil, fmt.Errorf("store: vector %s/%s: %w: %d bytes is not a dimension in 1..%d of float32",
			ns, id, store.ErrCorrupt, len(b), store.MaxDimension)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// cursorID returns an ID bound that PostgreSQL text can hold and that
// selects exactly the IDs after `after` in byte order. IDs are ASCII
// without NUL, so a cursor holding NUL or a non-ASCII byte (which text
// may refuse) is cut there: at a NUL the IDs after it are those after
// the part before it, and at a byte >= 0x80 those after that part
// followed by DEL (0x7f, above every byte an ID may hold).
func cursorID(after string) string {
	for i := 0; i < len(after); i++ {
		switch c := after[i]; {
		case c == 0:
			return after[:i]
		case c >= 0x80:
			return after[:i] + "\x7f"
		}
	}
	return after
}

// seqParam is a cursor's sequence as a bigint parameter (sequences are
// never negative, so one above MaxInt64 selects nothing after it).
func seqParam(seq uint64) int64 {
	return int64(min(seq, math.MaxInt64))
}
