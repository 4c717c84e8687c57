package tokentest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
)

// Encoder is a stand-in for a BERT / XLM-R tokenizer in tests that need
// no vocabulary file (any model's vocabulary size): each white-space separated
// word is one id (a hash into [First, Vocab)), laid out by the model's
// post-processor (BERT: [CLS] a [SEP] b [SEP], type ids 0 then 1; XLM-R:
// <s> a </s></s> b </s>, no type ids) and cut LongestFirst as Hugging
// Face tokenizers cut a pair. Its ids mean nothing; it tests the plumbing.
type Encoder struct {
	BERT  bool // BERT layout and type ids, else XLM-R's
	Begin int  // [CLS] or <s>
	Sep   int  // [SEP] or </s>
	First int  // the lowest word id
	Vocab int  // word ids are below this
}

// FakeBERT returns a BERT-layout Encoder over a vocabulary of vocab ids.
func FakeBERT(vocab int) *Encoder {
	return &Encoder{BERT: true, Begin: 2, Sep: 3, First: 5, Vocab: vocab}
}

// FakeXLMR returns an XLM-R-layout Encoder over a vocabulary of vocab ids
// (<s> 0, <pad> 1, </s> 2, as XLM-R's).
func FakeXLMR(vocab int) *Encoder { return &Encoder{Begin: 0, Sep: 2, First: 4, Vocab: vocab} }

func (e *Encoder) words(text string) []int {
	f := strings.Fields(text)
	ids := make([]int, len(f))
	for i, w := range f {
		h := fnv.New32a()
		_, _ = h.Write([]byte(w))
		ids[i] = e.First + int(h.Sum32()%uint32(e.Vocab-e.First))
	}
	return ids
}

// Encode implements model.EncoderTokenizer: [CLS] t [SEP] / <s> t </s>.
func (e *Encoder) Encode(_ context.Context, text string, maxLen int) ([]int, bool, error) {
	if maxLen < 3 {
		return nil, false, fmt.Errorf("max length %d is below the 2 special tokens and one word", maxLen)
	}
	w := e.words(text)
	cut := len(w) > maxLen-2
	if cut {
		w = w[:maxLen-2]
	}
	return append(append([]int{e.Begin}, w...), e.Sep), cut, nil
}

// EncodePair implements rerank.PairEncoder.
func (e *Encoder) EncodePair(query, doc string, maxLen int) (ids, typeIDs []int, truncated bool, err error) {
	special := 4 // <s> </s></s> </s>
	if e.BERT {
		special = 3
	}
	room := maxLen - special
	if room < 2 {
		return nil, nil, false, errors.New("max length leaves no room for the pair")
	}
	a, b := e.words(query), e.words(doc)
	if len(a)+len(b) > room {
		truncated = true
		na, nb := len(a), len(b)
		switch {
		case min(na, nb) <= room/2 && na <= nb:
			nb = room - na
		case min(na, nb) <= room/2:
			na = room - nb
		default:
			na, nb = room/2, room-room/2
		}
		a, b = a[:na], b[:nb]
	}
	ids = append([]int{e.Begin}, a...)
	if e.BERT {
		ids = append(ids, e.Sep)
		typeIDs = make([]int, len(ids), len(ids)+len(b)+1)
		ids = append(append(ids, b...), e.Sep)
		for len(typeIDs) < len(ids) {
			typeIDs = append(typeIDs, 1)
		}
		return ids, typeIDs, truncated, nil
	}
	ids = append(append(append(ids, e.Sep, e.Sep), b...), e.Sep)
	return ids, nil, truncated, nil
}
