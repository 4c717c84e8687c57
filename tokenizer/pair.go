package tokenizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Truncation is how EncodePairTruncate shortens a pair that does not fit.
type Truncation int

const (
	// LongestFirst keeps the shorter side whole when it fits in half or
	// less, else gives each side half (the first the floor), the
	// reference's default.
	LongestFirst Truncation = iota
	// OnlySecond cuts only the second text, failing when that is not enough.
	OnlySecond
)

// Encoded is one model input: a single text or a pair with the
// post-processor's special tokens added.
type Encoded struct {
	IDs     []int
	TypeIDs []int // token type (segment) ids, one per id
	// AttentionLen is the number of real tokens (len(IDs)); positions past
	// it in a padded batch are padding.
	AttentionLen int
	Truncated    bool // some text tokens were cut to fit maxLen
}

// postProcessor is a template: the special ids and type ids around the
// first (A) and second (B) sequence.
type postProcessor struct {
	single, pair []tmplPart
}

type tmplPart struct {
	seq    int   // 0: A, 1: B, -1: special tokens
	ids    []int // special ids when seq < 0
	typeID int
}

// MaxTypeID is the largest type id the post-processor's templates assign
// (0 without a post-processor).
func (t *Tokenizer) MaxTypeID() int {
	m := 0
	if t.pipe == nil || t.pipe.post == nil {
		return 0
	}
	for _, parts := range [][]tmplPart{t.pipe.post.single, t.pipe.post.pair} {
		for _, p := range parts {
			m = max(m, p.typeID)
		}
	}
	return m
}

func (p *postProcessor) added(pair bool) int {
	if p == nil {
		return 0
	}
	parts := p.single
	if pair {
		parts = p.pair
	}
	n := 0
	for _, x := range parts {
		n += len(x.ids)
	}
	return n
}

func postProcessorFrom(c pipeComponent, t *Tokenizer) (*postProcessor, error) {
	tokID := func(raw json.RawMessage, field string) (int, error) {
		var v [2]json.RawMessage
		var name string
		var id int
		if err := json.Unmarshal(raw, &v); err != nil {
			return 0, fmt.Errorf("%s: want [token, id]: %w", field, err)
		}
		if err := json.Unmarshal(v[0], &name); err != nil {
			return 0, fmt.Errorf("%s: %w", field, err)
		}
		if err := json.Unmarshal(v[1], &id); err != nil {
			return 0, fmt.Errorf("%s: %w", field, err)
		}
		if id < 0 || id >= len(t.tokens) {
			return 0, fmt.Errorf("%s: id %d out of range", field, id)
		}
		return id, nil
	}
	switch c.Type {
	case "RobertaProcessing", "BertProcessing":
		cls, err := tokID(c.Cls, "cls")
		if err != nil {
			return nil, err
		}
		sep, err := tokID(c.Sep, "sep")
		if err != nil {
			return nil, err
		}
		p := &postProcessor{
			single: []tmplPart{{seq: -1, ids: []int{cls}}, {seq: 0}, {seq: -1, ids: []int{sep}}},
		}
		if c.Type == "RobertaProcessing" {
			// <s> A </s></s> B </s>, every type id 0.
			p.pair = []tmplPart{{seq: -1, ids: []int{cls}}, {seq: 0}, {seq: -1, ids: []int{sep, sep}}, {seq: 1}, {seq: -1, ids: []int{sep}}}
		} else {
			p.pair = []tmplPart{{seq: -1, ids: []int{cls}}, {seq: 0}, {seq: -1, ids: []int{sep}}, {seq: 1, typeID: 1}, {seq: -1, ids: []int{sep}, typeID: 1}}
		}
		return p, nil
	case "TemplateProcessing":
		conv := func(items []templateItem, field string) ([]tmplPart, error) {
			var out []tmplPart
			for i, it := range items {
				switch {
				case it.Sequence != nil:
					seq := map[string]int{"A": 0, "B": 1}
					s, ok := seq[it.Sequence.ID]
					if !ok {
						return nil, fmt.Errorf("%s[%d]: sequence %q", field, i, it.Sequence.ID)
					}
					out = append(out, tmplPart{seq: s, typeID: it.Sequence.TypeID})
				case it.SpecialToken != nil:
					st, ok := c.SpecialTokens[it.SpecialToken.ID]
					if !ok {
						return nil, fmt.Errorf("%s[%d]: special token %q not in special_tokens", field, i, it.SpecialToken.ID)
					}
					for _, id := range st.IDs {
						if id < 0 || id >= len(t.tokens) {
							return nil, fmt.Errorf("%s[%d]: id %d out of range", field, i, id)
						}
					}
					out = append(out, tmplPart{seq: -1, ids: st.IDs, typeID: it.SpecialToken.TypeID})
				default:
					return nil, fmt.Errorf("%s[%d]: neither Sequence nor SpecialToken", field, i)
				}
			}
			return out, nil
		}
		single, err := conv(c.Single, "single")
		if err != nil {
			return nil, err
		}
		pair, err := conv(c.Pair, "pair")
		if err != nil {
			return nil, err
		}
		return &postProcessor{single: single, pair: pair}, nil
	}
	return nil, fmt.Errorf("type %q is not supported", c.Type)
}

// encodeNoSpecial returns the ids of text without special tokens on either
// path (BPE or pipeline).
// With plainSpecial, special-token strings in text are plain text
// (EncodeIDsUser's rule for a User part).
func (t *Tokenizer) encodeNoSpecial(st *stop, text string, plainSpecial bool) ([]int, error) {
	var spans [][2]int
	if plainSpecial && text != "" {
		if t.pipe != nil {
			text = validUTF8(text) // the pipeline's reading, first, so the span holds
		}
		spans = [][2]int{{0, len(text)}}
	}
	if t.pipe == nil {
		var ids []int
		err := t.encode(st, text, &ids, nil, spans)
		return ids, err
	}
	return t.pipe.encode(st, text, nil, spans)
}

func (t *Tokenizer) postProcessor() *postProcessor {
	if t.pipe == nil {
		return nil
	}
	return t.pipe.post
}

// EncodeSingle encodes one text with the post-processor's special tokens,
// cutting the text's tokens (from the right) so the whole fits maxLen;
// maxLen <= 0 means no limit.
func (t *Tokenizer) EncodeSingle(text string, maxLen int) (Encoded, error) {
	return t.EncodeSingleContext(context.Background(), text, maxLen)
}

// EncodeSingleContext is EncodeSingle that stops with ctx's error when
// ctx is done (see EncodeIDsUserContext).
func (t *Tokenizer) EncodeSingleContext(ctx context.Context, text string, maxLen int) (Encoded, error) {
	return t.EncodeSingleUser(ctx, text, maxLen, false)
}

// EncodeSingleUser is EncodeSingleContext for text from a user (a
// document, a memory, a query): with plainSpecial its special-token
// strings ("</s>", "[SEP]") are plain text, as the reference encodes with
// split_special_tokens=True; the post-processor's own special tokens
// are added as always.
func (t *Tokenizer) EncodeSingleUser(ctx context.Context, text string, maxLen int, plainSpecial bool) (Encoded, error) {
	a, err := t.encodeNoSpecial(newStop(ctx), text, plainSpecial)
	if err != nil {
		return Encoded{}, err
	}
	pp := t.postProcessor()
	truncated := false
	if maxLen > 0 {
		room := maxLen - pp.added(false)
		if room < 0 {
			return Encoded{}, fmt.Errorf("max length %d is below the %d special tokens", maxLen, pp.added(false))
		}
		if len(a) > room {
			a, truncated = a[:room], true
		}
	}
	return assemble(pp, false, a, nil, truncated), nil
}

// EncodePair encodes a (query, document) pair with the post-processor's
// special tokens, truncated LongestFirst to maxLen (<= 0: no limit).
func (t *Tokenizer) EncodePair(a, b string, maxLen int) (Encoded, error) {
	return t.EncodePairTruncate(a, b, maxLen, LongestFirst)
}

// EncodePairTruncate is EncodePair with the truncation strategy named.
func (t *Tokenizer) EncodePairTruncate(a, b string, maxLen int, strategy Truncation) (Encoded, error) {
	return t.EncodePairContext(context.Background(), a, b, maxLen, strategy)
}

// EncodePairContext is EncodePairTruncate that stops with ctx's error
// when ctx is done (see EncodeIDsUserContext).
func (t *Tokenizer) EncodePairContext(ctx context.Context, a, b string, maxLen int, strategy Truncation) (Encoded, error) {
	return t.EncodePairUser(ctx, a, b, maxLen, strategy, false)
}

// EncodePairUser is EncodePairContext for a pair of user texts (a query
// and a document): with plainSpecial their special-token strings are
// plain text (see EncodeSingleUser).
func (t *Tokenizer) EncodePairUser(ctx context.Context, a, b string, maxLen int, strategy Truncation, plainSpecial bool) (Encoded, error) {
	st := newStop(ctx)
	ia, err := t.encodeNoSpecial(st, a, plainSpecial)
	if err != nil {
		return Encoded{}, err
	}
	ib, err := t.encodeNoSpecial(st, b, plainSpecial)
	if err != nil {
		return Encoded{}, err
	}
	pp := t.postProcessor()
	truncated := false
	if maxLen > 0 {
		room := maxLen - pp.added(true)
		if room < 0 {
			return Encoded{}, fmt.Errorf("max length %d is below the %d special tokens", maxLen, pp.added(true))
		}
		n1, n2, err := truncatePair(len(ia), len(ib), room, strategy)
		if err != nil {
			return Encoded{}, err
		}
		truncated = n1 < len(ia) || n2 < len(ib)
		ia, ib = ia[:n1], ib[:n2]
	}
	return assemble(pp, true, ia, ib, truncated), nil
}

var errTooShort = errors.New("truncation: the second sequence is too short to remove enough tokens")

// truncatePair is the reference's truncate_encodings (truncation.rs) for
// the lengths: the kept lengths of both sides for a budget of room.
func truncatePair(l1, l2, room int, s Truncation) (int, int, error) {
	if l1+l2 <= room {
		return l1, l2, nil
	}
	if s == OnlySecond {
		remove := l1 + l2 - room
		if l2 <= remove {
			return 0, 0, errTooShort
		}
		return l1, l2 - remove, nil
	}
	short := min(l1, l2)
	long := max(short, room-short)
	if short > room {
		long = short
	}
	if short+long > room {
		short, long = room/2, room/2+room%2
	}
	n1, n2 := short, long
	if l1 > l2 {
		n1, n2 = long, short
	}
	return min(n1, l1), min(n2, l2), nil
}

func assemble(pp *postProcessor, pair bool, a, b []int, truncated bool) Encoded {
	var e Encoded
	if pp == nil {
		e.IDs = append(append(e.IDs, a...), b...)
		e.TypeIDs = make([]int, len(e.IDs))
		for i := len(a); i < len(e.IDs); i++ {
			e.TypeIDs[i] = 1
		}
	} else {
		parts := pp.single
		if pair {
			parts = pp.pair
		}
		for _, p := range parts {
			ids := p.ids
			switch p.seq {
			case 0:
				ids = a
			case 1:
				ids = b
			}
			e.IDs = append(e.IDs, ids...)
			for range ids {
				e.TypeIDs = append(e.TypeIDs, p.typeID)
			}
		}
	}
	e.AttentionLen, e.Truncated = len(e.IDs), truncated
	return e
}
