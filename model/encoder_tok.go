package model

import (
	"context"

	"github.com/rerankd/rerankd/tokenizer"
)

// tokenizerEncoder adapts package tokenizer's post-processed encodings
// (WordPiece for BERT, Unigram for XLM-R) to EncoderTokenizer.
// With plainSpecial (the default: LoadOptions.ControlTokensInText unset)
// special-token strings in the texts are plain text.
type tokenizerEncoder struct {
	t            *tokenizer.Tokenizer
	plainSpecial bool
}

// EncodePair implements rerank.PairEncoder: LongestFirst, special tokens
// counted in maxLen.
func (a tokenizerEncoder) EncodePair(query, doc string, maxLen int) (ids, typeIDs []int, truncated bool, err error) {
	e, err := a.t.EncodePairUser(context.Background(), query, doc, maxLen, tokenizer.LongestFirst, a.plainSpecial)
	if err != nil {
		return nil, nil, false, err
	}
	return e.IDs, e.TypeIDs, e.Truncated, nil
}

// EncodePairContext implements rerank.ContextPairEncoder: EncodePair
// that stops with ctx's error when the request's context is done.
func (a tokenizerEncoder) EncodePairContext(ctx context.Context, query, doc string, maxLen int) (ids, typeIDs []int, truncated bool, err error) {
	e, err := a.t.EncodePairUser(ctx, query, doc, maxLen, tokenizer.LongestFirst, a.plainSpecial)
	if err != nil {
		return nil, nil, false, err
	}
	return e.IDs, e.TypeIDs, e.Truncated, nil
}

// Encode implements EncoderTokenizer: one text cut at its end, stopped
// with ctx's error when ctx is done.
func (a tokenizerEncoder) Encode(ctx context.Context, text string, maxLen int) (ids []int, truncated bool, err error) {
	e, err := a.t.EncodeSingleUser(ctx, text, maxLen, a.plainSpecial)
	if err != nil {
		return nil, false, err
	}
	return e.IDs, e.Truncated, nil
}

// VocabSize is the tokenizer's number of ids, which must fit the model's
// embeddings.
func (a tokenizerEncoder) VocabSize() int { return a.t.VocabSize() }

// MaxTypeID is the largest type id the tokenizer's pair template assigns,
// which must fit the model's type embeddings.
func (a tokenizerEncoder) MaxTypeID() int { return a.t.MaxTypeID() }

// Token is the vocabulary text of id.
func (a tokenizerEncoder) Token(id int) (string, bool) { return a.t.Token(id) }
