package tokenizer

import (
	"context"
	"slices"
	"testing"
)

// TestEncodeUserPlainSpecial: for the encoder tokenizers (BERT's
// WordPiece, XLM-R's Unigram) user text's special-token strings are
// plain text under plainSpecial, as the reference encodes with
// split_special_tokens=True: "[SEP]" in a BERT text becomes the pieces of
// "[", "sep", "]" (what "[ SEP ]" gives, the pre-tokenizer splitting
// punctuation either way), and XLM-R's "</s>" its characters' pieces,
// decoding back to the text. Only the post-processor's own special
// tokens remain. Without plainSpecial the encoding is the reference's
// default (EncodeSingle, EncodePair), special tokens matched.
func TestEncodeUserPlainSpecial(t *testing.T) {
	bert, err := Load("testdata/wordpiece/bert-uncased.json")
	if err != nil {
		t.Fatal(err)
	}
	xlmr, err := Load("testdata/unigram/xlmr-current.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sep, _ := bert.TokenID("[SEP]")
	cls, _ := bert.TokenID("[CLS]")
	eos, _ := xlmr.TokenID("</s>")
	bos, _ := xlmr.TokenID("<s>")
	for _, c := range []struct {
		name        string
		tok         *Tokenizer
		text, plain string // plain: a text that has the same pieces with no special token in it ("" : check decoding)
		special     []int  // special ids that must not appear inside the text's span
	}{
		{"bert [SEP]", bert, "alice [SEP] bob [CLS] carol", "alice [ SEP ] bob [ CLS ] carol", []int{sep, cls}},
		{"xlmr </s>", xlmr, "alice</s><s>bob", "", []int{eos, bos}},
		{"xlmr text only", xlmr, "plain words", "", []int{eos, bos}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.tok.EncodeSingleUser(ctx, c.text, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			inner := got.IDs[1 : len(got.IDs)-1] // the post-processor's [CLS] … [SEP] / <s> … </s>
			for _, id := range c.special {
				if slices.Contains(inner, id) {
					t.Errorf("plain: special id %d inside the text: %v", id, got.IDs)
				}
			}
			if c.plain != "" {
				want, err := c.tok.EncodeSingle(c.plain, 0)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.IDs, want.IDs) {
					t.Errorf("plain %q = %v, want the pieces of %q %v", c.text, got.IDs, c.plain, want.IDs)
				}
			} else if dec, err := c.tok.Decode(got.IDs, true); err != nil || dec != c.text {
				t.Errorf("plain %q decodes to %q (%v)", c.text, dec, err)
			}
			ref, err := c.tok.EncodeSingle(c.text, 0)
			if err != nil {
				t.Fatal(err)
			}
			if off, _ := c.tok.EncodeSingleUser(ctx, c.text, 0, false); !slices.Equal(off.IDs, ref.IDs) {
				t.Errorf("reference mode %v, EncodeSingle %v", off.IDs, ref.IDs)
			}
			pair, err := c.tok.EncodePairUser(ctx, "query", c.text, 0, LongestFirst, true)
			if err != nil {
				t.Fatal(err)
			}
			refPair, err := c.tok.EncodePair("query", c.text, 0)
			if err != nil {
				t.Fatal(err)
			}
			count := func(ids []int) (n int) {
				for _, id := range ids {
					if slices.Contains(c.special, id) {
						n++
					}
				}
				return n
			}
			hasSpecial := c.name != "xlmr text only"
			if fixed := count(pair.IDs); hasSpecial && fixed >= count(refPair.IDs) || !hasSpecial && fixed != count(refPair.IDs) {
				t.Errorf("pair: %d special ids plain, %d in the reference mode (%v / %v)", fixed, count(refPair.IDs), pair.IDs, refPair.IDs)
			}
		})
	}
}
