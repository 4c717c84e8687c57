package model

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
)

// TestSpecialTokensInUserText: by default (LoadOptions.ControlTokensInText
// unset) special-token strings in a cross-encoder's pair and in an
// embedding model's input are plain text: only the tokenizer's own
// template adds control tokens (XLM-R "<s> q </s></s> d </s>": three
// </s>; Qwen3-Embedding: one <|endoftext|> at the end). With the option
// set, the text is encoded as the Hugging Face reference does by default,
// the strings becoming the control tokens they name.
func TestSpecialTokensInUserText(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "tokenizer", "testdata", "unigram", "xlmr-current.json"))
	if err != nil {
		t.Fatal(err)
	}
	xlmr := t.TempDir()
	if err := os.WriteFile(filepath.Join(xlmr, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	qwen := tinyEmbeddingModel(t, onnx.EmbedHidden, false)
	count := func(ids []int, id int) (n int) {
		for _, x := range ids {
			if x == id {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		control bool
		pairEOS int // </s> in the pair "query" / "a</s>b<s>c"
		embEOT  int // <|endoftext|> in the embedded "a<|endoftext|>b"
	}{{false, 3, 1}, {true, 4, 2}} {
		enc, err := encoderTokenizer(xlmr, LoadOptions{ControlTokensInText: c.control})
		if err != nil {
			t.Fatal(err)
		}
		ids, _, _, err := enc.(tokenizerEncoder).EncodePair("query", "a</s>b<s>c", 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(ids, 2); n != c.pairEOS || slices.Contains(ids[1:], 0) != c.control {
			t.Errorf("control tokens in text %v: pair %v has %d </s> (want %d)", c.control, ids, n, c.pairEOS)
		}
		single, _, err := enc.Encode(context.Background(), "a</s>b", 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(single, 2); n != c.pairEOS-2 {
			t.Errorf("control tokens in text %v: single %v has %d </s>, want %d", c.control, single, n, c.pairEOS-2)
		}

		o := DefaultEmbedderOptions()
		o.Engine, o.ControlTokensInText = EngineReference, c.control
		e, err := OpenEmbedder(qwen, o)
		if err != nil {
			t.Fatal(err)
		}
		eot, ok := e.tok.TokenID(folder.EndOfText)
		if !ok {
			t.Fatal("no <|endoftext|>")
		}
		toks, _ := e.Tokens("a"+folder.EndOfText+"b", false)
		_ = e.Close()
		if n := count(toks, eot); n != c.embEOT || toks[len(toks)-1] != eot {
			t.Errorf("control tokens in text %v: embedding input %v has %d %s, want %d (the last the template's)", c.control, toks, n, folder.EndOfText, c.embEOT)
		}
	}
}
