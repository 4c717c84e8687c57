package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/rerankd/rerankd/retrieval/store"
)

// withHeader wraps a JSON payload in a memory record header with a valid
// checksum.
func withHeader(payload []byte) []byte {
	b := make([]byte, memHeaderLen+len(payload))
	b[0], b[1] = memMagic, memVersion
	binary.LittleEndian.PutUint32(b[4:8], crc32.Checksum(payload, castagnoli))
	copy(b[memHeaderLen:], payload)
	return b
}

// FuzzDecodeMemoryPayload fuzzes the JSON inside a record whose header and
// checksum are right. FuzzDecodeMemory mutates whole records, so nearly
// every input stops at the checksum and the JSON decoder is barely reached.
// A record that decodes must re-encode (check/repair and compaction
// rewrite records they read), read back from its own key, and encoding must
// reach a fixed point after one trip.
func FuzzDecodeMemoryPayload(f *testing.F) {
	good, _ := encodeMemory(mem("ns", "a").Normalize())
	f.Add(good[memHeaderLen:])
	for _, s := range []string{
		`{"id":"a","namespace":"ns","text":"t","schema_version":1}`,
		`{"id":"a","namespace":"ns","text":"t","time":"2024-05-06T07:08:09.00000001+05:30","schema_version":1}`,
		`{"id":"a","namespace":"ns","text":"t","time":"0000-01-01T00:00:00+23:59","schema_version":1}`,
		`{"id":"a","namespace":"ns","text":"t","time":"9999-12-31T23:59:59-23:59","schema_version":1}`,
		`{"id":"a","namespace":"ns","text":"\ud800\u0000","metadata":{"":"\xff"},"source":"..","schema_version":1}`,
		`{"id":"a","namespace":"ns","metadata":null,"schema_version":1.0}`,
		`{"schema_version":2}`,
		`{"schema_version":-1}`,
		`[]`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		m, err := decodeMemory(withHeader(payload))
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("%q: error %v does not wrap store.ErrCorrupt", payload, err)
			}
			return
		}
		re, err := encodeMemory(m)
		if err != nil {
			t.Fatalf("%q: decoded record does not re-encode: %v", payload, err)
		}
		m2, err := decodeMemoryAt(re, m.Namespace, m.ID)
		if err != nil {
			t.Fatalf("%q: re-encoded record does not read back: %v", payload, err)
		}
		re2, err := encodeMemory(m2)
		if err != nil || !bytes.Equal(re, re2) {
			t.Fatalf("%q: not a fixed point:\n%s\n%s (%v)", payload, re[memHeaderLen:], re2[memHeaderLen:], err)
		}
	})
}
