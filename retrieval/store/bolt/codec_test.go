package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

func TestDecodeVector(t *testing.T) {
	good := encodeVector([]float32{1, -2, 3.5})
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"good", good, true},
		{"empty", nil, false},
		{"short header", good[:11], false},
		{"bad magic", mut(func(b []byte) []byte { b[0] = 'X'; return b }), false},
		{"bad version", mut(func(b []byte) []byte { b[1] = 9; return b }), false},
		{"reserved set", mut(func(b []byte) []byte { b[2] = 1; return b }), false},
		{"dim zero", mut(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 0); return b }), false},
		{"dim huge", mut(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], math.MaxUint32); return b }), false},
		{"dim mismatch", mut(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 2); return b }), false},
		{"truncated payload", good[:len(good)-1], false},
		{"extra payload", append(append([]byte(nil), good...), 0, 0, 0, 0), false},
		{"bad crc", mut(func(b []byte) []byte { b[8] ^= 1; return b }), false},
		{"flipped payload", mut(func(b []byte) []byte { b[12] ^= 0x80; return b }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := decodeVector(tt.in)
			if tt.ok {
				if err != nil || len(v) != 3 || v[2] != 3.5 {
					t.Fatalf("decode = %v, %v", v, err)
				}
				return
			}
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("err = %v, want store.ErrCorrupt", err)
			}
		})
	}
}

func TestValidateVector(t *testing.T) {
	tests := []struct {
		name string
		v    []float32
		dim  int
		ok   bool
	}{
		{"ok", []float32{1, 2}, 0, true},
		{"ok fixed dim", []float32{1, 2}, 2, true},
		{"empty", []float32{}, 0, false},
		{"wrong dim", []float32{1, 2}, 3, false},
		{"nan", []float32{float32(math.NaN())}, 0, false},
		{"inf", []float32{float32(math.Inf(-1))}, 0, false},
		{"too big", make([]float32, store.MaxDimension+1), 0, false},
	}
	for _, tt := range tests {
		if err := store.ValidateVector(tt.v, tt.dim); (err == nil) != tt.ok {
			t.Errorf("%s: validateVector = %v", tt.name, err)
		} else if err != nil && !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err %v not store.ErrInvalid", tt.name, err)
		}
	}
}

func TestDecodeMemory(t *testing.T) {
	good, err := encodeMemory(mem("ns", "a").Normalize())
	if err != nil {
		t.Fatal(err)
	}
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	reenc := func(payload string) []byte {
		b := make([]byte, memHeaderLen+len(payload))
		b[0], b[1] = memMagic, memVersion
		binary.LittleEndian.PutUint32(b[4:], crc32c([]byte(payload)))
		copy(b[memHeaderLen:], payload)
		return b
	}
	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"good", good, true},
		{"empty", nil, false},
		{"short", good[:7], false},
		{"bad magic", mut(func(b []byte) []byte { b[0] = 'V'; return b }), false},
		{"bad version", mut(func(b []byte) []byte { b[1] = 2; return b }), false},
		{"bad crc", mut(func(b []byte) []byte { b[4] ^= 1; return b }), false},
		{"flipped json", mut(func(b []byte) []byte { b[10] ^= 1; return b }), false},
		{"json not object", reenc(`[1,2]`), false},
		{"schema zero", reenc(`{"id":"a","namespace":"ns","text":"t"}`), false},
		{"schema future", reenc(`{"id":"a","namespace":"ns","text":"t","schema_version":99}`), false},
		{"minimal ok", reenc(`{"id":"a","namespace":"ns","text":"t","schema_version":1}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeMemory(tt.in)
			if tt.ok {
				if err != nil || m.ID != "a" {
					t.Fatalf("decode = %+v, %v", m, err)
				}
				return
			}
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("err = %v, want store.ErrCorrupt", err)
			}
		})
	}
	if _, err := decodeMemoryAt(good, "ns", "other"); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("misplaced record accepted: %v", err)
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func FuzzDecodeVector(f *testing.F) {
	f.Add(encodeVector([]float32{1, -2, 3.5}))
	f.Add(encodeVector([]float32{0}))
	f.Add([]byte{})
	f.Add([]byte("V\x01\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVector(b)
		if err != nil {
			return
		}
		if re := encodeVector(v); !bytes.Equal(re, b) {
			t.Fatalf("re-encode mismatch: %x vs %x", re, b)
		}
	})
}

func FuzzDecodeMemory(f *testing.F) {
	good, _ := encodeMemory(mem("ns", "a").Normalize())
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte("M\x01\x00\x00\x00\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMemory(b)
		if err != nil {
			return
		}
		if _, err := encodeMemory(m); err != nil {
			t.Fatalf("decoded memory does not re-encode: %v", err)
		}
	})
}
