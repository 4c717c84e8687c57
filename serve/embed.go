package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
)

// Embedder is what the embedding routes need of the embedding model: the
// queue it shares with the memory search (embed.Queue), which refuses a
// request it has no room for.
type Embedder interface {
	TryEmbed(ctx context.Context, texts []string, o retrieval.EmbedOptions) (retrieval.EmbedResult, error)
	Dim() int
}

// EmbedModel is the served embedding model.
type EmbedModel struct {
	// Queue runs every embedding call (required).
	Queue Embedder
	// Names are the names it is served under; the first is the one every
	// response carries (required).
	Names []string
	// MaxLength is the most tokens of one input (for /info and /v1/models),
	// and MaxLengthFrom where it came from (/info).
	MaxLength     int
	MaxLengthFrom string
	// RandomWeights marks an embedding model with random weights (/info
	// says so).
	RandomWeights bool
	// QueueSize is the queue's bound on texts (for /info).
	QueueSize int
	// Matryoshka: the model is trained for shorter vectors (dimensions).
	Matryoshka bool
	// PromptNames are the folder's named prompts (for /info).
	PromptNames []string
	// Tokens returns the ids a text is embedded from (for /tokenize); nil:
	// /tokenize does not serve the embedder.
	Tokens func(ctx context.Context, text string, o retrieval.EmbedOptions) (ids []int, cut bool, err error)
	// TokenText returns a token's text (for /tokenize); may be nil.
	TokenText func(id int) (string, bool)
}

// WithEmbedder serves m on /v1/embeddings and /embed (and names it in
// /v1/models and /info); call before Serve. Without it those routes
// answer 404 saying no embedding model runs.
func (s *Server) WithEmbedder(m EmbedModel) error {
	errs := checkNames("embedder", m.Names)
	if len(m.Names) == 0 {
		errs = append(errs, errors.New("embedder: at least one served name is required"))
	}
	if m.Queue == nil {
		errs = append(errs, errors.New("embedder: no queue"))
	}
	for _, n := range m.Names {
		if slices.Contains(s.rerankerNames(), n) {
			errs = append(errs, fmt.Errorf("served model name %q names both the reranker and the embedder", n))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.emb = &m
	return nil
}

// checkNames validates one model's served names.
func checkNames(what string, names []string) []error {
	var errs []error
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case strings.TrimSpace(n) == "":
			errs = append(errs, fmt.Errorf("%s: a served model name is empty", what))
		case seen[n]:
			errs = append(errs, fmt.Errorf("%s: served model name %q given twice", what, n))
		}
		seen[n] = true
	}
	return errs
}

// rerankerNames are the reranker's served names, the answering one first.
func (s *Server) rerankerNames() []string {
	if len(s.cfg.RerankerNames) > 0 {
		return s.cfg.RerankerNames
	}
	return []string{s.backend.ModelID()}
}

// answering is the name of the model that answers a request naming
// requested on a route served by the model called names: its first
// name, or under StrictModelName a 404 when requested names no served
// model of that task.
func (s *Server) answering(names []string, task, requested, param string) (string, error) {
	if requested == "" || slices.Contains(names, requested) || !s.cfg.StrictModelName {
		return names[0], nil
	}
	e := newError(KindModelNotFound, "the model %q does not exist on this server: %s is served as %s (GET /v1/models lists every name)",
		requested, task, strings.Join(quoteNames(names), ", "))
	e.Param = param
	return "", e
}

func quoteNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

func (s *Server) embedder() (*EmbedModel, error) {
	if s.emb == nil {
		return nil, newError(KindNotFound, "no embedding model: start rerankd with --embed-model to serve embeddings")
	}
	return s.emb, nil
}

// embedCall runs one request's texts through the queue inside a
// "rerankd.embed" span and maps the embedder's errors to kinds.
func (s *Server) embedCall(c *fiber.Ctx, m *EmbedModel, texts []string, o retrieval.EmbedOptions) (retrieval.EmbedResult, error) {
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.RequestTimeout)
	defer cancel()
	stop := watchDisconnect(c.Context().Conn(), cancel, 50*time.Millisecond)
	defer stop()
	ctx, sp := startSpan(ctx, "rerankd.embed", attribute.Int("rerankd.inputs", len(texts)))
	start := time.Now()
	res, err := m.Queue.TryEmbed(ctx, texts, o)
	if err == nil {
		tokens := 0
		for _, n := range res.Tokens {
			tokens += n
		}
		sp.SetAttributes(attribute.Int("rerankd.tokens", tokens), attribute.Int("rerankd.truncated", res.Truncated))
		s.metrics.observeEmbedded(len(texts), tokens)
	}
	endSpan(sp, err)
	c.Set("X-Compute-Time", fmt.Sprintf("%.3f", float64(time.Since(start).Microseconds())/1000))
	if err != nil {
		return retrieval.EmbedResult{}, classifyEmbed(err)
	}
	return res, nil
}

// classifyEmbed maps the embedding queue's and model's errors to kinds
// (retrieval.Classify knows the queue's); an unknown one is "embedding
// failed".
func classifyEmbed(err error) *Error { return classifyAs(err, "embedding failed") }

// embedInputs checks the texts of an embedding request, adding problems
// (named after field) to bad.
func (s *Server) embedInputs(in api.Inputs, field string, bad func(format string, a ...any)) {
	switch {
	case !in.Set:
		bad("%s is required: a string or an array of strings", field)
		return
	case in.TokenIDs:
		bad("%s: arrays of token ids are not supported; send the text", field)
		return
	case len(in.Pairs) > 0:
		bad("%s: [text, text] pairs are for /tokenize; send strings", field)
		return
	case len(in.Texts) == 0:
		bad("%s must not be empty", field)
	case len(in.Texts) > s.cfg.MaxEmbedInputs:
		bad("%s has %d texts: this server accepts at most %d per request", field, len(in.Texts), s.cfg.MaxEmbedInputs)
	}
	var blank []string
	for i, t := range in.Texts {
		if strings.TrimSpace(t) == "" {
			blank = append(blank, fmt.Sprint(i))
		}
	}
	if len(blank) > 0 {
		if in.Single {
			bad("%s must not be empty or blank", field)
		} else {
			bad("%s[%s] is empty or blank: it has no meaning to embed", field, strings.Join(blank, ","))
		}
	}
}

// checkDimensions adds a problem when dims cannot be served by m.
func checkDimensions(m *EmbedModel, dims *int, bad func(format string, a ...any)) int {
	if dims == nil {
		return 0
	}
	full := m.Queue.Dim()
	switch {
	case !m.Matryoshka:
		bad("dimensions: model %q is not trained for shorter (Matryoshka) vectors; omit dimensions (it gives %d)", m.Names[0], full)
	case *dims < 1 || *dims > full:
		bad("dimensions %d: want 1 to %d (the model's size)", *dims, full)
	}
	return *dims
}

// problems collects validation messages and the first field they name.
type problems struct {
	msgs  []string
	param string
}

func (p *problems) add(param string) func(format string, a ...any) {
	return func(format string, a ...any) {
		if p.param == "" {
			p.param = param
		}
		p.msgs = append(p.msgs, fmt.Sprintf(format, a...))
	}
}

func (p *problems) err(k Kind) error {
	if len(p.msgs) == 0 {
		return nil
	}
	e := newError(k, "%s", strings.Join(p.msgs, "; "))
	e.Param = p.param
	return e
}

// handleEmbeddings answers OpenAI's POST /v1/embeddings.
func (s *Server) handleEmbeddings(c *fiber.Ctx) error {
	m, err := s.embedder()
	if err != nil {
		return err
	}
	req, err := decodeJSON[api.EmbeddingsRequest](c)
	if err != nil {
		return err
	}
	name, err := s.answering(m.Names, "the embedder", req.Model, "model")
	if err != nil {
		return err
	}
	var p problems
	s.embedInputs(req.Input, "input", p.add("input"))
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		p.add("encoding_format")("encoding_format %q: want float or base64", req.EncodingFormat)
	}
	dims := checkDimensions(m, req.Dimensions, p.add("dimensions"))
	switch req.InputType {
	case "", "document", "query":
	default:
		p.add("input_type")("input_type %q: want document (default) or query", req.InputType)
	}
	// OpenAI answers every unacceptable field 400.
	if err := p.err(KindInvalid); err != nil {
		return err
	}
	res, err := s.embedCall(c, m, req.Input.Texts, retrieval.EmbedOptions{Query: req.InputType == "query", Dim: dims})
	if err != nil {
		return err
	}
	resp := api.EmbeddingsResponse{Object: "list", Model: name, Data: make([]api.Embedding, len(res.Vectors))}
	for i, v := range res.Vectors {
		resp.Data[i] = api.Embedding{Object: "embedding", Index: i, Embedding: api.Vector{Values: v, Base64: req.EncodingFormat == "base64"}}
		resp.Usage.PromptTokens += res.Tokens[i]
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	return c.JSON(resp)
}

// handleTEIEmbed answers text-embeddings-inference's POST /embed: a bare
// array of vectors.
func (s *Server) handleTEIEmbed(c *fiber.Ctx) error {
	m, err := s.embedder()
	if err != nil {
		return err
	}
	req, err := decodeJSON[api.TEIEmbedRequest](c)
	if err != nil {
		return err
	}
	var p problems
	s.embedInputs(req.Inputs, "inputs", p.add("inputs"))
	o := retrieval.EmbedOptions{Raw: req.Normalize != nil && !*req.Normalize, NoTruncate: req.Truncate == nil || !*req.Truncate}
	switch strings.ToLower(req.TruncationDirection) {
	case "", "right":
	case "left":
		o.CutStart = true
	default:
		p.add("truncation_direction")("truncation_direction %q: want Right or Left", req.TruncationDirection)
	}
	if req.PromptName != nil {
		switch name := *req.PromptName; {
		case name == "query":
			o.Query = true
		case name == "document" || name == "":
			// The document prompt, as with no prompt_name: what the memory
			// search stores.
		case !slices.Contains(m.PromptNames, name):
			p.add("prompt_name")("prompt_name %q: the model folder defines %s", name, promptList(m.PromptNames))
		default:
			o.PromptName = name
		}
	}
	o.Dim = checkDimensions(m, req.Dimensions, p.add("dimensions"))
	if err := p.err(KindValidation); err != nil {
		return err
	}
	res, err := s.embedCall(c, m, req.Inputs.Texts, o)
	if err != nil {
		return err
	}
	c.Set("X-Model", m.Names[0])
	return c.JSON(res.Vectors)
}

func promptList(names []string) string {
	if len(names) == 0 {
		return "no prompts (query and document are always accepted)"
	}
	return strings.Join(quoteNames(names), ", ") + " (query and document are always accepted)"
}

// handleModels answers OpenAI's GET /v1/models: every served name of the
// reranker and the embedder.
func (s *Server) handleModels(c *fiber.Ctx) error {
	list := api.ModelList{Object: "list", Data: []api.ModelCard{}}
	add := func(names []string, task string, maxLen int) {
		for _, n := range names {
			list.Data = append(list.Data, api.ModelCard{ID: n, Object: "model", Created: s.started.Unix(), OwnedBy: "rerankd",
				Root: names[0], Task: task, MaxModelLen: maxLen})
		}
	}
	add(s.rerankerNames(), "rerank", s.backend.MaxTokens())
	if s.emb != nil {
		add(s.emb.Names, "embed", s.emb.MaxLength)
	}
	return c.JSON(list)
}

// embedderInfo is /info's embedder section.
func (s *Server) embedderInfo() *api.EmbedderInfo {
	if s.emb == nil {
		return nil
	}
	m := s.emb
	return &api.EmbedderInfo{Names: m.Names, Dimensions: m.Queue.Dim(), Matryoshka: m.Matryoshka, MaxInputTokens: m.MaxLength, MaxInputTokensFrom: m.MaxLengthFrom, RandomWeights: m.RandomWeights,
		MaxInputs: s.cfg.MaxEmbedInputs, MaxQueueTexts: m.QueueSize, PromptNames: m.PromptNames}
}
