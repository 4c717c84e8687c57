package tokenizer

import (
	"encoding/json"
	"testing"

	"github.com/sugarme/tokenizer/pretokenizer"
)

// tinyJSON builds a small, valid Qwen-style tokenizer.json: the 256
// byte-level tokens (ids 0-255 in byte order), the given merges (each adds
// the merged token), and two added tokens. It lets tests edit one field at a
// time without the 11 MB real file.
func tinyJSON(t testing.TB, merges [][2]string, edit func(m map[string]any)) []byte {
	t.Helper()
	chars := pretokenizer.GenerateBytesChar()
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[chars[uint8(b)]] = b
	}
	var ms []any
	for _, m := range merges {
		vocab[m[0]+m[1]] = len(vocab)
		ms = append(ms, []string{m[0], m[1]})
	}
	n := len(vocab)
	f := map[string]any{
		"added_tokens": []any{
			map[string]any{"id": n, "content": "<|endoftext|>", "special": true},
			map[string]any{"id": n + 1, "content": "<think>", "special": false},
		},
		"normalizer": map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": QwenSplitPattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocab, "merges": ms},
	}
	if edit != nil {
		edit(f)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func tiny(t testing.TB, merges [][2]string) *Tokenizer {
	t.Helper()
	tk, err := FromBytes(tinyJSON(t, merges, nil), []byte(`{"pad_token": "<|endoftext|>", "eos_token": {"content": "<think>"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}
