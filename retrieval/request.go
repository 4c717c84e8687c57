package retrieval

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// The service's own types, as its callers name them.
type (
	// Memory is one memory (retrieval/memory).
	Memory = memory.Memory
	// Item is a memory to write, with its vector when the client sent
	// one: what Add takes.
	Item = store.Item
	// Record is a stored memory with its vector (nil if none): what Get
	// and List return.
	Record = store.Record
	// Matcher is a compiled filter (retrieval/filter): what List and a
	// Query take.
	Matcher = filter.Matcher
	// EmbedOptions are the options of one call of the embedding queue
	// the memory search embeds with (retrieval/embed), which the
	// embedding routes share.
	EmbedOptions = embed.Options
	// EmbedResult is the answer of one such call.
	EmbedResult = embed.Result
)

// ValidateNamespace checks a namespace name against the rules every call
// of the Service applies (a front checks a key's namespace patterns with
// it).
func ValidateNamespace(ns string) error { return memory.ValidateNamespace(ns) }

// The API's bounds and defaults.
const (
	// MaxTopK bounds a search's top_k and depth.
	MaxTopK = 1000
	// MaxListLimit bounds, and DefaultListLimit is, a listing's page.
	MaxListLimit     = 1000
	DefaultListLimit = 100
	// DefaultRerankDepth is how many retrieved candidates a search
	// reranks when it does not say (at most Reranking.MaxDepth).
	DefaultRerankDepth = 50
)

// Scorer is the scheduled scorer the composition root builds once (over
// the model's scheduler queue, calibrated when the server is) and hands
// down to the service beside the /rerank route: it scores texts against
// a query under an instruction ("": the model's default) and returns one
// probability per text, in order.
type Scorer interface {
	Score(ctx context.Context, instruction, query string, texts []string) ([]float64, error)
}

// Reranking is how the API's searches (SearchRequestOf) rerank.
type Reranking struct {
	// Scorer reranks; nil: the service cannot rerank, and a request that
	// asks to is refused.
	Scorer Scorer
	// ByDefault reranks a request that does not say (a neural scorer);
	// false reranks only when asked (the lexical default, whose scores
	// are word overlap).
	ByDefault bool
	// Threshold is a reranked search's threshold when the request sends
	// none (a calibration's); nil: none.
	Threshold *float64
	// MaxDepth bounds a request's rerank_depth (the most documents the
	// scorer takes in one call); 0: MaxTopK.
	MaxDepth int
}

// validate reports every problem of r.
func (r Reranking) validate() []error {
	var errs []error
	if r.ByDefault && r.Scorer == nil {
		errs = append(errs, fmt.Errorf("retrieval: Rerank.ByDefault without a Rerank.Scorer"))
	}
	if t := r.Threshold; t != nil && !(*t >= 0 && *t <= 1) {
		errs = append(errs, fieldErr("Rerank.Threshold", *t, "in [0, 1]"))
	}
	if r.MaxDepth < 0 {
		errs = append(errs, fieldErr("Rerank.MaxDepth", r.MaxDepth, ">= 0"))
	}
	return errs
}

// maxDepth is rerank_depth's bound.
func (r Reranking) maxDepth() int {
	if r.MaxDepth == 0 {
		return MaxTopK
	}
	return r.MaxDepth
}

// instructed is the Reranker of one request: the Scorer under the
// request's instruction.
type instructed struct {
	s           Scorer
	instruction string
}

func (r instructed) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	return r.s.Score(ctx, r.instruction, query, texts)
}

// SearchRequestOf maps an API search (POST /v1/search, MCP's
// memory_search) onto a SearchRequest: the defaults applied (Config.Rerank
// decides whether it reranks and the default threshold), every field
// checked, and every problem reported at once, each naming its request
// field ("recency.half_life", "mmr.lambda"). A blank query is a
// KindBadRequest *Error; anything else a KindInvalid one (KindNoVectors
// for a vector the service has no index for). now is the server's clock,
// recency's reference time when the request gives none: the pipeline
// itself never reads the wall clock.
func (s *Service) SearchRequestOf(r *api.SearchRequest, now time.Time) (SearchRequest, error) {
	out := SearchRequest{Query: Query{Namespace: r.Namespace, Text: r.Query, Vector: r.Vector, Mode: Mode(r.Mode)}}
	if strings.TrimSpace(r.Query) == "" {
		return out, &Error{Kind: KindBadRequest, Field: "query", Msg: "query must not be empty", Err: ErrInvalid}
	}
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	rr := s.cfg.Rerank
	// count copies an explicit count in 1..hi; one out of range is
	// reported here and left at 0 (the pipeline's default) so that the
	// pipeline's own checks do not report it again.
	count := func(name string, p *int, hi int) int {
		if p == nil {
			return 0
		}
		if *p < 1 || *p > hi {
			bad("%s %d: want 1..%d", name, *p, hi)
			return 0
		}
		return *p
	}
	out.TopK = count("top_k", r.TopK, MaxTopK)
	out.Depth = count("depth", r.Depth, MaxTopK)
	out.RerankDepth = count("rerank_depth", r.RerankDepth, rr.maxDepth())
	if r.RerankDepth == nil {
		out.RerankDepth = min(DefaultRerankDepth, rr.maxDepth())
	}
	doRerank := rr.ByDefault
	if r.Rerank != nil {
		doRerank = *r.Rerank
	}
	switch {
	case doRerank && rr.Scorer == nil:
		bad("rerank: this server has no reranker")
	case doRerank:
		out.Rerank = instructed{s: rr.Scorer, instruction: r.Instruction}
	}
	out.Threshold = r.Threshold
	if r.Threshold == nil && out.Rerank != nil {
		// A calibrated server applies its threshold to the (calibrated)
		// rerank probability by default; retrieval scores are not on that
		// scale, so without reranking there is no default.
		out.Threshold = rr.Threshold
	}
	if f := r.Fusion; f != nil {
		fc := post.DefaultFusionConfig()
		if f.Method != "" {
			fc.Method = post.FusionMethod(f.Method)
		}
		setF(&fc.VectorWeight, f.VectorWeight)
		setF(&fc.BM25Weight, f.BM25Weight)
		setF(&fc.RRFK, f.RRFK)
		out.Fusion = &fc
	}
	if p := r.Recency; p != nil {
		rc := post.DefaultRecencyConfig()
		setF(&rc.Weight, p.Weight)
		if p.HalfLife != "" {
			d, err := time.ParseDuration(p.HalfLife)
			if err != nil {
				bad("recency.half_life %q: want a duration like \"168h\"", p.HalfLife)
			} else {
				rc.HalfLife = d
			}
		}
		out.Recency, out.Now = &rc, now
		if p.Now != nil {
			out.Now = *p.Now
		}
	}
	if p := r.MMR; p != nil {
		mc := post.DefaultMMRConfig()
		setF(&mc.Lambda, p.Lambda)
		if p.Window != nil {
			mc.Window = *p.Window
		}
		out.MMR = &mc
	}
	if p := r.Prefer; p != nil {
		pr := &Prefer{Weight: DefaultPreferWeight}
		setF(&pr.Weight, p.Weight)
		if p.Filters != nil {
			m, err := CompileFilter(p.Filters)
			switch {
			case err != nil:
				bad("prefer.filters: %s", err.Error())
				pr = nil
			case m == nil:
				bad("prefer.filters: empty (it would favour every memory)")
				pr = nil
			default:
				pr.Match = m
			}
		}
		out.Prefer = pr // without filters the pipeline reports them missing
	}
	if f, err := CompileFilter(r.Filters); err != nil {
		bad("filters: %s", err.Error())
	} else {
		out.Filter = f
	}
	if p := r.Ranking; p != nil {
		if rk, err := rankingOf(p); err != nil {
			bad("ranking.%s", err.Error())
		} else {
			out.Ranking = &rk
		}
	}
	more, noVectors := s.searchProblems(out)
	probs = append(probs, more...)
	return out, problemsErr(probs, noVectors)
}

// keyProblem is the text of a namespace's or ID's problem (from
// memory.ValidateNamespace or ValidateID), which names the key first:
// `namespace "../x": starts with '.'`.
func keyProblem(err error) string {
	return strings.TrimPrefix(Describe(err), memory.ErrInvalid.Error()+": ")
}

// problemsErr is the error of a request with problems probs (nil for
// none): KindNoVectors when one of them is a vector the service has no
// index for, else KindInvalid; the field is the first problem's.
func problemsErr(probs []string, noVectors bool) error {
	if len(probs) == 0 {
		return nil
	}
	field, _, _ := strings.Cut(probs[0], " ")
	field = strings.TrimSuffix(field, ":")
	if noVectors {
		return &Error{Kind: KindNoVectors, Field: field, Msg: strings.Join(probs, "; "), Err: ErrNoVectors}
	}
	return invalid(field, probs)
}

// rankingOf maps the API's ranking onto lexrank's: the named ranking,
// then each field given. The pipeline validates the result.
func rankingOf(p *api.RankingParams) (lexrank.Ranking, error) {
	rk, err := lexrank.RankingByName(p.Name)
	if err != nil {
		return rk, err
	}
	setF(&rk.K1, p.K1)
	setF(&rk.B, p.B)
	setF(&rk.NameWeight, p.NameWeight)
	if p.QueryWords != nil {
		rk.QueryWords = *p.QueryWords
	}
	if x := p.Expansion; x != nil {
		if rk.Expansion == (lexrank.Expansion{}) {
			rk.Expansion = lexrank.DefaultExpansion()
		}
		setI(&rk.Expansion.Docs, x.Docs)
		setI(&rk.Expansion.Terms, x.Terms)
		setF(&rk.Expansion.Weight, x.Weight)
	}
	if c := p.Context; c != nil {
		setI(&rk.Context.Window, c.Window)
		setF(&rk.Context.Neighbour, c.Neighbour)
		setF(&rk.Context.Source, c.Source)
	}
	if f := p.Fields; f != nil {
		if rk.Fields == (lexrank.Fields{}) {
			rk.Fields = lexrank.DefaultFields()
		}
		setF(&rk.Fields.Speaker, f.Speaker)
		setF(&rk.Fields.Time, f.Time)
		setF(&rk.Fields.SpeakerB, f.SpeakerB)
		setF(&rk.Fields.TimeB, f.TimeB)
	}
	return rk, nil
}

func setI(dst *int, p *int) {
	if p != nil {
		*dst = *p
	}
}

func setF(dst *float64, p *float64) {
	if p != nil {
		*dst = *p
	}
}

// fieldProblems names each of the problems in err (one, or several
// joined) by its place in the request: "recency.half_life 0s: want ...".
func fieldProblems(parent string, err error) []string {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, parent+"."+Describe(e))
	}
	return out
}

// CompileFilter validates the API's filter and compiles it (nil: none).
// Its error names every condition at fault; it is a KindInvalid *Error.
func CompileFilter(f *api.Filter) (*Matcher, error) {
	if f == nil {
		return nil, nil
	}
	m, err := filter.Compile(filterOf(f))
	if err != nil {
		return nil, &Error{Kind: KindInvalid, Field: "filters", Msg: strings.TrimPrefix(Describe(err), "invalid filter: "), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	return m, nil
}

func filterOf(f *api.Filter) *filter.Filter {
	return &filter.Filter{Must: conditionsOf(f.Must), Should: conditionsOf(f.Should), MustNot: conditionsOf(f.MustNot)}
}

func conditionsOf(cs []api.Condition) []filter.Condition {
	if cs == nil {
		return nil
	}
	out := make([]filter.Condition, len(cs))
	for i, c := range cs {
		fc := filter.Condition{Key: c.Key}
		if m := c.Match; m != nil {
			fc.Match = &filter.Match{Value: m.Value, Any: m.Any, Except: m.Except}
		}
		if r := c.Range; r != nil {
			fc.Range = &filter.Range{GT: r.GT, GTE: r.GTE, LT: r.LT, LTE: r.LTE}
		}
		if c.IsEmpty != nil {
			fc.IsEmpty = c.IsEmpty.Key
			if fc.IsEmpty == "" {
				fc.IsEmpty = "metadata." // the empty metadata key: Compile names it
			}
		}
		if c.Must != nil || c.Should != nil || c.MustNot != nil {
			fc.Nested = filterOf(&api.Filter{Must: c.Must, Should: c.Should, MustNot: c.MustNot})
		}
		out[i] = fc
	}
	return out
}

// ItemsOf maps an API add request (POST /v1/memories, MCP's memory_add)
// onto the items Add writes: one memory at the top level or a batch in
// "memories" (the top-level namespace the batch's default), at most
// MaxBatch, each without a time given now and without an ID newID's.
// Add validates the memories themselves; this checks the request's shape
// and converts the metadata, naming the memory at fault.
func ItemsOf(req *api.AddMemoriesRequest, now time.Time, newID func() string) ([]Item, error) {
	ins := req.Memories
	if ins == nil {
		ins = []api.MemoryIn{req.MemoryIn}
	} else if req.Text != "" || req.ID != "" || req.Vector != nil || req.Time != nil || req.Source != "" || req.Metadata != nil {
		return nil, &Error{Kind: KindInvalid, Field: "memories", Err: ErrInvalid,
			Msg: "send one memory at the top level or a batch in \"memories\", not both (only \"namespace\" is a batch-wide default)"}
	}
	if len(ins) == 0 {
		return nil, &Error{Kind: KindInvalid, Field: "memories", Msg: "\"memories\" is empty", Err: ErrInvalid}
	}
	if len(ins) > MaxBatch {
		return nil, &Error{Kind: KindTooLarge, Field: "memories", Msg: fmt.Sprintf("%d memories in one request: at most %d", len(ins), MaxBatch), Err: ErrInvalid}
	}
	items := make([]Item, len(ins))
	var probs []string
	for i, in := range ins {
		ns := in.Namespace
		if ns == "" {
			ns = req.Namespace
		}
		id := in.ID
		if id == "" {
			id = newID()
		}
		t := now
		if in.Time != nil {
			t = *in.Time
		}
		md, err := memory.FromAny(in.Metadata)
		if err != nil {
			probs = append(probs, fmt.Sprintf("memory %d: %s", i, Describe(err)))
		}
		items[i] = Item{Memory: Memory{Namespace: ns, ID: id, Text: in.Text, Time: t, Source: in.Source, Metadata: md}, Vector: in.Vector}
	}
	if len(probs) > 0 {
		return nil, invalid("metadata", probs)
	}
	return items, nil
}

// PatchOf maps an API update (PATCH /v1/memories/:ns/:id, MCP's
// memory_update) onto a Patch: a null metadata value removes its key.
func PatchOf(req *api.UpdateMemoryRequest) (Patch, error) {
	if req.Text == nil && req.Time == nil && req.Source == nil && req.Metadata == nil && req.Vector == nil {
		return Patch{}, &Error{Kind: KindInvalid, Msg: "nothing to update: send text, time, source, metadata or vector", Err: ErrInvalid}
	}
	p := Patch{Text: req.Text, Time: req.Time, Source: req.Source, Vector: req.Vector}
	if req.Metadata != nil {
		p.Metadata = make(memory.Metadata, len(req.Metadata))
		set := map[string]any{}
		for k, v := range req.Metadata {
			if v == nil {
				p.Metadata[k] = memory.Value{} // null removes the key
			} else {
				set[k] = v
			}
		}
		md, err := memory.FromAny(set)
		if err != nil {
			return Patch{}, &Error{Kind: KindInvalid, Field: "metadata", Msg: Describe(err), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
		}
		for k, v := range md {
			p.Metadata[k] = v
		}
	}
	return p, nil
}

// ListPage checks a listing's page size and cursor (GET
// /v1/memories/:ns, MCP's memory_list): limit nil is DefaultListLimit.
func ListPage(limit *int, after string) (int, error) {
	n := DefaultListLimit
	var probs []string
	if limit != nil {
		if *limit < 1 || *limit > MaxListLimit {
			probs = append(probs, fmt.Sprintf("limit %d: want an integer in 1..%d", *limit, MaxListLimit))
		}
		n = *limit
	}
	if after != "" {
		if err := memory.ValidateID(after); err != nil {
			probs = append(probs, "after: "+keyProblem(err))
		}
	}
	if len(probs) > 0 {
		field, _, _ := strings.Cut(probs[0], " ")
		return 0, invalid(strings.TrimSuffix(field, ":"), probs)
	}
	return n, nil
}
