package model

import "github.com/rerankd/rerankd/tokenizer"

// tokenizerEncoder adapts package tokenizer's post-processed encodings
// (WordPiece for BERT, Unigram for XLM-R) to EncoderTokenizer.
type tokenizerEncoder struct{ t *tokenizer.Tokenizer }

// EncodePair implements rerank.PairEncoder: LongestFirst, special tokens
// counted in maxLen.
func (a tokenizerEncoder) EncodePair(query, doc string, maxLen int) (ids, typeIDs []int, truncated bool, err error) {
	e, err := a.t.EncodePair(query, doc, maxLen)
	if err != nil {
		return nil, nil, false, err
	}
	return e.IDs, e.TypeIDs, e.Truncated, nil
}

// Encode implements EncoderTokenizer: one text cut at its end.
func (a tokenizerEncoder) Encode(text string, maxLen int) (ids []int, truncated bool, err error) {
	e, err := a.t.EncodeSingle(text, maxLen)
	if err != nil {
		return nil, false, err
	}
	return e.IDs, e.Truncated, nil
}

// VocabSize is the tokenizer's number of ids, which must fit the model's
// embeddings.
func (a tokenizerEncoder) VocabSize() int { return a.t.VocabSize() }

// Token is the vocabulary text of id.
func (a tokenizerEncoder) Token(id int) (string, bool) { return a.t.Token(id) }
