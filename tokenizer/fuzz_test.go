package tokenizer

import (
	"encoding/binary"
	"strings"
	"testing"
	"unicode/utf8"
)

// refNFC is what decode(encode(x)) must give: x with each invalid byte read
// as U+FFFD, then NFC as the reference computes it (whole string at once,
// unlike the segment-wise path under test).
func refNFC(x string) string {
	var b strings.Builder
	for _, r := range x { // a range loop yields U+FFFD per invalid byte
		b.WriteRune(r)
	}
	return string(appendNFCRef(nil, b.String()))
}

func FuzzEncode(f *testing.F) {
	tk := qwen(f)
	for _, s := range []string{"", "Hello world", "it'ſ", "\xff\xfe", "a\u07fd\u0308", "<|im_start|>\u0301",
		strings.Repeat(" ", 1000), "e\u0301\u0316", "\ufeff<|endoftext|>"} {
		f.Add(s)
	}
	for i, c := range readGolden(f) {
		if i%10 == 0 {
			f.Add(c.Text)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := tk.Encode(s)
		for _, id := range e.IDs {
			if id < 0 || id >= tk.VocabSize() {
				t.Fatalf("id %d out of range", id)
			}
		}
		checkOffsets(t, s, e)
		ids := tk.EncodeIDs(s)
		if len(ids) != len(e.IDs) {
			t.Fatalf("EncodeIDs and Encode disagree on %q", s)
		}
		dec, err := tk.Decode(e.IDs, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := refNFC(s); dec != want {
			t.Fatalf("decode(encode(%q)) = %q, want %q (valid UTF-8: %v)", s, dec, want, utf8.ValidString(s))
		}
	})
}

func FuzzDecode(f *testing.F) {
	tk := qwen(f)
	f.Add([]byte{0, 0, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add(binary.LittleEndian.AppendUint32(nil, 151644))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var ids []int
		bad := false
		for len(raw) >= 4 {
			id := int(int32(binary.LittleEndian.Uint32(raw)))
			bad = bad || id < 0 || id >= tk.VocabSize()
			ids = append(ids, id)
			raw = raw[4:]
		}
		s, err := tk.Decode(ids, len(ids)%2 == 0)
		if (err != nil) != bad {
			t.Fatalf("Decode(%v): err %v, want error: %v", ids, err, bad)
		}
		if err == nil && !utf8.ValidString(s) {
			t.Fatalf("Decode(%v) gave invalid UTF-8 %q", ids, s)
		}
	})
}

// FuzzFromBytes feeds arbitrary tokenizer.json / tokenizer_config.json
// contents to the loader: errors are fine, panics and hangs are not.
func FuzzFromBytes(f *testing.F) {
	f.Add(tinyJSON(f, [][2]string{{"a", "b"}}, nil), []byte(`{"pad_token":"<|endoftext|>"}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":["a a"]}}`), []byte(nil))
	f.Add([]byte(`{"added_tokens":[{"id":-5,"content":""}]}`), []byte(`{"pad_token":{"content":1}}`))
	f.Fuzz(func(t *testing.T, data, cfg []byte) {
		tk, err := FromBytes(data, cfg)
		if err != nil {
			return
		}
		ids := tk.EncodeIDs("hello <|endoftext|> wörld")
		if _, err := tk.Decode(ids, true); err != nil {
			t.Fatalf("decode of own ids failed: %v", err)
		}
	})
}
