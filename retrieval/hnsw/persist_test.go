package hnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand"
	"slices"
	"testing"
)

// FuzzLoad feeds damaged saved indexes to Load: it must return an index
// or ErrCorrupt, never panic or allocate from an unchecked count.
func FuzzLoad(f *testing.F) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 30} {
		cfg := DefaultConfig(4)
		cfg.M, cfg.EfConstruction = 2, 4
		h, err := New(cfg)
		if err != nil {
			f.Fatal(err)
		}
		fill(f, uniform(r, n, 4), h)
		if n > 0 {
			h.Delete("v0")
		}
		var buf bytes.Buffer
		if err := h.Save(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Re-seal the checksum so that damage reaches the consistency
		// checks and the loaded index, not only the CRC.
		if len(data) > 4 && data[len(data)-1]&1 == 0 {
			body := data[:len(data)-4]
			data = binary.LittleEndian.AppendUint32(slices.Clip(body), crc32.Checksum(body, castagnoli))
		}
		x, err := Load(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		// A checksum-valid input is a real index: it must be usable. (A
		// config can name any dimension; do not allocate gigabytes here.)
		if x.Dim() > 1<<12 {
			return
		}
		if _, err := x.Search([]float32{1, 2, 3, 4}, 3); err != nil && x.Dim() == 4 {
			t.Fatal(err)
		}
		v := make([]float32, x.Dim())
		v[0] = 1
		if err := x.Add("fuzz-new", v); err != nil {
			t.Fatal(err)
		}
	})
}
