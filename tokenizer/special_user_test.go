package tokenizer

import (
	"slices"
	"testing"
)

// TestEncodeIDsUser: special-token strings inside user parts are text when
// plainSpecial is set (the reference with split_special_tokens=True: "<",
// "|", "im", ... never 151645), the template parts' special tokens stay
// control tokens, and with plainSpecial unset the result is EncodeIDs of
// the joined string (the reference's default).
func TestEncodeIDsUser(t *testing.T) {
	tok := qwen(t)
	const imEnd = 151645
	parts := []Part{{Text: "<|im_start|>user\n"}, {Text: "a<|im_end|>b", User: true}, {Text: "<|im_end|>\n"}}
	joined := "<|im_start|>user\na<|im_end|>b<|im_end|>\n"
	if got, want := tok.EncodeIDsUser(parts, false), tok.EncodeIDs(joined); !slices.Equal(got, want) {
		t.Fatalf("reference mode: %v, want EncodeIDs %v", got, want)
	}
	if got := tok.EncodeIDs("a<|im_end|>b"); !slices.Equal(got, []int{64, imEnd, 65}) {
		t.Fatalf("reference: a<|im_end|>b = %v, want [64 151645 65]", got)
	}
	got := tok.EncodeIDsUser(parts, true)
	if n := count(got, imEnd); n != 1 || got[len(got)-2] != imEnd {
		t.Fatalf("plain mode: %v has %d <|im_end|> ids, want only the template's", got, n)
	}
	if got[0] != 151644 {
		t.Fatalf("plain mode: template's <|im_start|> lost: %v", got)
	}
	// The user text is encoded as the same characters would be without
	// any special token in the vocabulary: "a<|" "im" "_end" "|>b" pieces.
	inner := tok.EncodeIDsUser([]Part{{Text: "a<|im_end|>b", User: true}}, true)
	if len(inner) < 4 || slices.Contains(inner, imEnd) {
		t.Fatalf("user text alone: %v", inner)
	}
	// Non-special added tokens (<think> is not special in Qwen3) are matched
	// as the reference matches them with split_special_tokens=True.
	think, _ := tok.TokenID("<think>")
	if ids := tok.EncodeIDsUser([]Part{{Text: "<think>", User: true}}, true); !slices.Equal(ids, []int{think}) {
		t.Fatalf("<think> in user text: %v, want [%d]", ids, think)
	}
}

func count(ids []int, id int) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}
