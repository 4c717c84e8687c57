package serve

import (
	"context"
	"fmt"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
)

// pairTokenizer is a reranker backend that can say which tokens it scores
// a (query, document) pair on (scoring.Neural).
type pairTokenizer interface {
	PairTokens(ctx context.Context, query, doc string) ([]int, error)
	TokenText(id int) (string, bool)
}

// handleTokenize answers POST /tokenize: the tokens a served model runs on.
// TEI's form ("inputs": strings, or [query, document] pairs for the
// reranker) answers a list of token lists; vLLM's ("prompt") answers
// {count, max_model_len, tokens}. The embedder answers for texts (its
// prompt and template included), the reranker for pairs (its whole
// prompt); "model" picks one by served name, else texts go to the
// embedder and pairs to the reranker.
func (s *Server) handleTokenize(c *fiber.Ctx) error {
	req, err := decodeJSON[api.TokenizeRequest](c)
	if err != nil {
		return err
	}
	var p problems
	bad := p.add("inputs")
	texts, pairs := req.Inputs.Texts, req.Inputs.Pairs
	switch {
	case req.Prompt != nil && req.Inputs.Set:
		bad("send either inputs (the TEI form) or prompt (the vllm form), not both")
	case req.Prompt != nil:
		texts, pairs = []string{*req.Prompt}, nil
	case !req.Inputs.Set:
		bad("inputs (or prompt) is required")
	case req.Inputs.TokenIDs:
		bad("inputs: arrays of token ids are already tokens")
	case len(texts) == 0:
		bad("inputs must not be empty")
	case len(texts) > s.cfg.MaxEmbedInputs:
		bad("inputs has %d elements: this server accepts at most %d per request", len(texts), s.cfg.MaxEmbedInputs)
	}
	if req.AddSpecialTokens != nil && !*req.AddSpecialTokens {
		p.add("add_special_tokens")("add_special_tokens false is not supported: the tokens are those the model runs on, template included")
	}
	if err := p.err(KindValidation); err != nil {
		return err
	}
	useEmbedder := len(pairs) == 0 && s.emb != nil && s.emb.Tokens != nil
	if req.Model != "" {
		switch {
		case s.emb != nil && slices.Contains(s.emb.Names, req.Model):
			useEmbedder = true
		case slices.Contains(s.rerankerNames(), req.Model):
			useEmbedder = false
		case s.cfg.StrictModelName:
			_, err := s.answering(s.rerankerNames(), "the reranker", req.Model, "model")
			return err
		}
	}
	tokens := make([][]int, len(texts))
	// Tokenizing a huge input stops at the request's deadline.
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.RequestTimeout)
	defer cancel()
	var text func(int) (string, bool)
	maxLen := s.backend.MaxTokens()
	if useEmbedder {
		m := s.emb
		if m.Tokens == nil {
			return newError(KindValidation, "the embedder %q has no tokenizer to report", m.Names[0])
		}
		if len(pairs) > 0 {
			return newError(KindValidation, "inputs: the embedder %q tokenizes texts, not pairs; pairs are for the reranker", m.Names[0])
		}
		o := retrieval.EmbedOptions{}
		if req.PromptName != nil {
			switch *req.PromptName {
			case "query":
				o.Query = true
			case "document", "":
			default:
				o.PromptName = *req.PromptName
			}
		}
		for i, t := range texts {
			if tokens[i], _, err = m.Tokens(ctx, t, o); err != nil {
				return classifyEmbed(fmt.Errorf("inputs[%d]: %w", i, err))
			}
		}
		text, maxLen = m.TokenText, m.MaxLength
	} else {
		pt, ok := s.backend.(pairTokenizer)
		if !ok {
			return newError(KindValidation, "the reranker %q (backend %s) has no tokenizer; start rerankd with --model (or --embed-model for texts)", s.rerankerNames()[0], s.backend.Name())
		}
		var missing []int
		for i := range texts {
			pair, ok := pairs[i]
			if !ok {
				missing = append(missing, i)
				continue
			}
			if tokens[i], err = pt.PairTokens(ctx, pair[0], pair[1]); err != nil {
				return classify(err)
			}
		}
		if len(missing) > 0 {
			return newError(KindValidation, "inputs %v: the reranker tokenizes [query, document] pairs, not single texts", missing)
		}
		text = pt.TokenText
	}
	if req.Prompt != nil {
		name := s.rerankerNames()[0]
		if useEmbedder {
			name = s.emb.Names[0]
		}
		return c.JSON(api.TokenizeResponse{Count: len(tokens[0]), MaxModelLen: maxLen, Tokens: tokens[0], Model: name})
	}
	out := make([][]api.Token, len(tokens))
	for i, ids := range tokens {
		out[i] = make([]api.Token, len(ids))
		for k, id := range ids {
			out[i][k].ID = id
			if text != nil {
				out[i][k].Text, _ = text(id)
			}
		}
	}
	return c.JSON(out)
}
