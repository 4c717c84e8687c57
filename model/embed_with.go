package model

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/rerankd/rerankd/internal/batching"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/tokenizer"
)

// EmbedWith embeds texts as Embed does, under o: a named prompt, the
// other truncation direction, a refusal instead of a cut, a Matryoshka
// size or raw (unnormalised) vectors. With the zero Options (or only
// Query set) the vectors are exactly Embed's, which the memory search
// stores and searches with. Every bad text is reported at once.
func (e *Embedder) EmbedWith(ctx context.Context, texts []string, o embed.Options) (embed.Result, error) {
	dim, err := e.callDim(o.Dim)
	if err != nil {
		return embed.Result{}, err
	}
	if _, err := e.prefix(o); err != nil {
		return embed.Result{}, err
	}
	seqs := make([][]int, len(texts))
	res := embed.Result{Vectors: make([][]float32, len(texts)), Tokens: make([]int, len(texts))}
	var errs []error
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			errs = append(errs, fmt.Errorf("text %d: %w", i, ErrEmptyText))
			continue
		}
		ids, cut, err := e.tokensWith(ctx, t, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("text %d: %w", i, err))
			continue
		}
		seqs[i], res.Tokens[i] = ids, len(ids)
		if cut {
			res.Truncated++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return embed.Result{}, err
	}
	// Padded: the engine pads every row to the longest and computes it.
	for _, batch := range batching.Plan(seqs, e.cfg.MaxBatch, e.cfg.BatchTokens, e.cfg.MaxPadRatio, batching.Padded, nil, e.engine.SameLengthBatches()) {
		if err := ctx.Err(); err != nil {
			return embed.Result{}, err
		}
		in := make([][]int, len(batch))
		for k, i := range batch {
			in[k] = seqs[i]
		}
		vecs, err := e.engine.Pooled(ctx, in)
		if err != nil {
			return embed.Result{}, err
		}
		if len(vecs) != len(in) {
			return embed.Result{}, fmt.Errorf("engine returned %d vectors for %d sequences", len(vecs), len(in))
		}
		for k, i := range batch {
			if res.Vectors[i], err = e.finish(vecs[k], dim, o.Raw); err != nil {
				return embed.Result{}, fmt.Errorf("text %d: %w", i, err)
			}
		}
	}
	return res, nil
}

// Matryoshka reports whether the model is trained so that a prefix of its
// vectors is an embedding too (Qwen3-Embedding is; BERT / XLM-R
// bi-encoders such as BGE-M3 are not), so that a request may ask for a
// shorter size.
func (e *Embedder) Matryoshka() bool { return e.enc == nil }

// PromptNames lists the folder's named prompts, sorted.
func (e *Embedder) PromptNames() []string { return slices.Sorted(maps.Keys(e.prompts)) }

// MaxLength is the most tokens of one input, template tokens included.
func (e *Embedder) MaxLength() int { return e.cfg.MaxLength }

// callDim is the vector size of one call asking for dim (0: the
// configured size).
func (e *Embedder) callDim(dim int) (int, error) {
	switch {
	case dim == 0:
		return e.dim, nil
	case !e.Matryoshka():
		return 0, fmt.Errorf("%w: model %s is not trained for shorter (Matryoshka) vectors; omit dimensions (it gives %d)", embed.ErrNoMatryoshka, e.name(), e.dim)
	case dim < 1 || dim > e.modelDim:
		return 0, fmt.Errorf("%w: %d is outside [1, %d] (the model's size)", embed.ErrNoMatryoshka, dim, e.modelDim)
	}
	return dim, nil
}

func (e *Embedder) name() string {
	if e.info.Dir == "" {
		return "(unnamed)"
	}
	return e.info.Dir
}

// prefix is the text placed before each input of a call with o.
func (e *Embedder) prefix(o embed.Options) (string, error) {
	switch {
	case o.PromptName != "":
		p, ok := e.prompts[o.PromptName]
		if !ok {
			names := e.PromptNames()
			if len(names) == 0 {
				return "", fmt.Errorf("%w %q: the model folder defines no prompts", embed.ErrUnknownPrompt, o.PromptName)
			}
			return "", fmt.Errorf("%w %q: the model folder defines %s", embed.ErrUnknownPrompt, o.PromptName, strings.Join(names, ", "))
		}
		return p, nil
	case o.Query:
		return e.queryPrefix, nil
	}
	return e.docPrefix, nil
}

// tokensWith returns the ids text is embedded from under o and whether
// it was cut; it stops with ctx's error when ctx is done.
func (e *Embedder) tokensWith(ctx context.Context, text string, o embed.Options) ([]int, bool, error) {
	prefix, err := e.prefix(o)
	if err != nil {
		return nil, false, err
	}
	limit := e.cfg.MaxLength
	if e.enc != nil {
		if !o.CutStart && !o.NoTruncate {
			return e.enc.Encode(ctx, prefix+text, limit)
		}
		ids, _, err := e.enc.Encode(ctx, prefix+text, math.MaxInt32) // whole, then cut here
		if err != nil || len(ids) <= limit {
			return ids, false, err
		}
		if o.NoTruncate {
			return nil, false, fmt.Errorf("%w: %d tokens, the limit is %d", embed.ErrTooLong, len(ids), limit)
		}
		// The template's first and last tokens ([CLS] … [SEP], <s> … </s>)
		// stay; the text loses its start.
		out := append([]int{ids[0]}, ids[len(ids)-(limit-1):]...)
		return out, true, nil
	}
	body, err := e.tok.EncodeIDsUserContext(ctx, []tokenizer.Part{{Text: prefix}, {Text: text, User: true}}, e.plainSpecial)
	if err != nil {
		return nil, false, err
	}
	room := limit - len(e.begin) - len(e.end)
	cut := len(body) > room
	switch {
	case cut && o.NoTruncate:
		return nil, false, fmt.Errorf("%w: %d tokens, the limit is %d", embed.ErrTooLong, len(body)+len(e.begin)+len(e.end), limit)
	case cut && o.CutStart:
		body = body[len(body)-room:]
	case cut:
		body = body[:room]
	}
	return e.wrap(body), cut, nil
}

// TokenText is a token's text in the vocabulary ("", false where the
// tokenizer cannot say).
func (e *Embedder) TokenText(id int) (string, bool) {
	if e.tok != nil {
		return e.tok.Token(id)
	}
	if t, ok := e.enc.(interface{ Token(int) (string, bool) }); ok {
		return t.Token(id)
	}
	return "", false
}
