package tokenizer

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// Encode returns the ids and offsets of text, without adding special tokens.
// Added tokens written in the text (such as "<|im_start|>") are recognised
// and encoded as their single id, as the reference does.
func (t *Tokenizer) Encode(text string) Encoding {
	var e Encoding
	_ = t.encode(nil, text, &e.IDs, &e.Offsets, nil)
	return e
}

// EncodeIDs is Encode without offsets, for the scoring hot path.
func (t *Tokenizer) EncodeIDs(text string) []int {
	var ids []int
	_ = t.encode(nil, text, &ids, nil, nil)
	return ids
}

// Part is a piece of a text to encode: a template's own words, or text
// from a user (a query, a document, a stored memory).
type Part struct {
	Text string
	// User marks text whose special-token strings ("<|im_end|>") must
	// stay text: encoded as the characters they are, never as the control
	// token, as the reference with split_special_tokens=True. The template
	// parts' special tokens are still matched.
	User bool
}

// EncodeIDsUser encodes the parts joined, as EncodeIDs does the joined
// string except that special tokens inside User parts are plain text
// when plainSpecial is set (with it unset it is EncodeIDs, the
// reference's default). Invalid UTF-8 in a part is read as EncodeIDs
// reads it.
func (t *Tokenizer) EncodeIDsUser(parts []Part, plainSpecial bool) []int {
	ids, _ := t.EncodeIDsUserContext(context.Background(), parts, plainSpecial)
	return ids
}

// EncodeIDsUserContext is EncodeIDsUser that stops when ctx is done,
// returning ctx's error (checked every checkEvery words, so a huge text
// stops within microseconds of a request's deadline or cancellation).
func (t *Tokenizer) EncodeIDsUserContext(ctx context.Context, parts []Part, plainSpecial bool) ([]int, error) {
	var b strings.Builder
	var spans [][2]int
	for _, p := range parts {
		text := p.Text
		if t.pipe != nil {
			text = validUTF8(text) // the pipeline's reading, done per part so the spans hold
		}
		if p.User && plainSpecial && text != "" {
			spans = append(spans, [2]int{b.Len(), b.Len() + len(text)})
		}
		b.WriteString(text)
	}
	var ids []int
	err := t.encode(newStop(ctx), b.String(), &ids, nil, spans)
	return ids, err
}

// EncodeBatch encodes texts in parallel (up to GOMAXPROCS goroutines); the
// result is in input order and equals encoding each text alone.
func (t *Tokenizer) EncodeBatch(texts []string) []Encoding {
	out := make([]Encoding, len(texts))
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	if workers <= 1 {
		for i, s := range texts {
			out[i] = t.Encode(s)
		}
		return out
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = t.Encode(texts[i])
			}
		}()
	}
	for i := range texts {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// checkEvery is how many words an encoding runs between two looks at its
// context: a context's Err is an atomic load, so this costs nothing
// measurable, and a few hundred words take microseconds.
const checkEvery = 256

// stop ends an encoding early when its context is done. A nil *stop
// never stops.
type stop struct {
	ctx   context.Context
	words int
}

func newStop(ctx context.Context) *stop {
	if ctx == nil || ctx.Done() == nil {
		return nil // context.Background and TODO are never done
	}
	return &stop{ctx: ctx}
}

// word counts one word and returns the context's error every checkEvery
// words once it is done.
func (s *stop) word() error {
	if s == nil {
		return nil
	}
	if s.words++; s.words%checkEvery != 0 {
		return nil
	}
	return s.err()
}

// errIf returns the context's error when it is done, else nil: an
// encoding error that is not the stop's is left to the caller that
// reports it (EncodeSingle).
func (s *stop) errIf(error) error { return s.err() }

func (s *stop) err() error {
	if s == nil {
		return nil
	}
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("tokenize: %w", err)
	}
	return nil
}

func (t *Tokenizer) encode(st *stop, text string, ids *[]int, offs *[]Offset, plainSpans [][2]int) error {
	if t.pipe != nil {
		// A model without unk_id fails on text it has no piece for; the
		// ids up to there are returned (EncodeSingle reports the error).
		var err error
		*ids, err = t.pipe.encode(st, text, *ids, plainSpans)
		return st.errIf(err)
	}
	if err := st.err(); err != nil {
		return err
	}
	var segBuf [8]segment
	var wordBuf [64]span
	for _, seg := range t.matcher.split(text, segBuf[:0], plainSpans) {
		if seg.added >= 0 {
			*ids = append(*ids, t.added[seg.added].id)
			if offs != nil {
				*offs = append(*offs, Offset{seg.start, seg.end})
			}
			continue
		}
		a := normalize(text[seg.start:seg.end], seg.start)
		for _, w := range splitWords(a.text, wordBuf[:0]) {
			if err := st.word(); err != nil {
				return err
			}
			word := a.text[w.start:w.end]
			pieces, ok := t.cache.get(word)
			if !ok {
				pieces = t.bpeWord(word)
				t.cache.put(word, pieces)
			}
			pos := w.start
			for _, p := range pieces {
				*ids = append(*ids, int(p.id))
				if offs != nil {
					*offs = append(*offs, a.span(pos, pos+int(p.len)))
				}
				pos += int(p.len)
			}
		}
	}
	return nil
}
