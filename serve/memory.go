package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// Memory API limits.
const (
	maxListLimit     = 1000
	defaultListLimit = 100
	maxTopK          = 1000
	defaultRerankCap = 50
)

// WithMemory enables the memory API on e; call before Serve. Without it
// the memory routes answer 404 saying the API is disabled.
func (s *Server) WithMemory(e *retrieval.Service) {
	s.mem = e
	if e == nil {
		return
	}
	s.metrics.watchEngine(e.Totals)
	if e.Shared() {
		s.metrics.watchMemory(e.Follow)
	}
}

// routeMemory registers the memory API.
func (s *Server) routeMemory() {
	s.app.Post("/v1/memories", s.handleAddMemories)
	s.app.Get("/v1/memories/:ns", s.handleListMemories)
	s.app.Get("/v1/memories/:ns/:id", s.handleGetMemory)
	s.app.Delete("/v1/memories/:ns/:id", s.handleDeleteMemory)
	s.app.Patch("/v1/memories/:ns/:id", s.handleUpdateMemory)
	s.app.Delete("/v1/memories/:ns", s.handleForget)
	s.app.Get("/v1/namespaces", s.handleNamespaces)
	s.app.Post("/v1/search", s.handleSearch)
}

func (s *Server) memory() (*retrieval.Service, error) {
	if s.mem == nil {
		return nil, newError(KindNotFound, "memory API disabled: start rerankd with a memory store (--store)")
	}
	return s.mem, nil
}

func (s *Server) handleAddMemories(c *fiber.Ctx) error {
	if _, err := s.memory(); err != nil {
		return err
	}
	req, err := decodeStrictJSON[api.AddMemoriesRequest](c)
	if err != nil {
		return err
	}
	resp, err := s.addMemories(c.UserContext(), scopeOf(c), req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(resp)
}

// addMemories validates and writes one request's memories; the HTTP and
// MCP fronts both call it, so they answer the same input the same way.
func (s *Server) addMemories(ctx context.Context, sc scope, req *api.AddMemoriesRequest) (api.AddMemoriesResponse, error) {
	var resp api.AddMemoriesResponse
	e, err := s.memory()
	if err != nil {
		return resp, err
	}
	ins := req.Memories
	if ins == nil {
		ins = []api.MemoryIn{req.MemoryIn}
	} else if req.Text != "" || req.ID != "" || req.Vector != nil || req.Time != nil || req.Source != "" || req.Metadata != nil {
		return resp, newError(KindValidation, "send one memory at the top level or a batch in \"memories\", not both (only \"namespace\" is a batch-wide default)")
	}
	if len(ins) == 0 {
		return resp, newError(KindValidation, "\"memories\" is empty")
	}
	if len(ins) > retrieval.MaxBatch {
		return resp, newError(KindTooLarge, "%d memories in one request: at most %d", len(ins), retrieval.MaxBatch)
	}
	now := time.Now().UTC()
	items := make([]store.Item, len(ins))
	for i, in := range ins {
		ns := in.Namespace
		if ns == "" {
			ns = req.Namespace
		}
		id := in.ID
		if id == "" {
			id = requestID()
		}
		t := now
		if in.Time != nil {
			t = *in.Time
		}
		md, err := memory.FromAny(in.Metadata)
		if err != nil {
			return resp, newError(KindValidation, "memory %d: %s", i, trimPrefix(err))
		}
		items[i] = store.Item{Memory: memory.Memory{Namespace: ns, ID: id, Text: in.Text, Time: t,
			Source: in.Source, Metadata: md}, Vector: in.Vector}
		if err := sc.check(ns); err != nil {
			return resp, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	added, err := e.Add(ctx, items)
	if err != nil {
		return resp, err
	}
	resp.Added = make([]api.AddedMemory, len(added))
	for i, a := range added {
		resp.Added[i] = api.AddedMemory{Namespace: a.Namespace, ID: a.ID, Vector: string(a.Vector)}
	}
	return resp, nil
}

// pathParams returns the named path segments, each percent-decoded once
// (what encodeURIComponent and every HTTP client send for "alice:work").
// Decoding happens after routing, so an encoded "/" cannot change the
// route: it decodes into the segment, where validation refuses it.
func pathParams(c *fiber.Ctx, names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		raw := c.Params(n)
		v, err := url.PathUnescape(raw)
		if err != nil {
			return nil, newError(KindValidation, "%s in the path: malformed percent-encoding", n)
		}
		out[i] = strings.Clone(v)
	}
	return out, nil
}

func (s *Server) handleGetMemory(c *fiber.Ctx) error {
	if _, err := s.memory(); err != nil {
		return err
	}
	p, err := pathParams(c, "ns", "id")
	if err != nil {
		return err
	}
	m, err := s.getMemory(scopeOf(c), p[0], p[1])
	if err != nil {
		return err
	}
	return c.JSON(m)
}

// getMemory reads one memory; the HTTP and MCP fronts both call it.
func (s *Server) getMemory(sc scope, ns, id string) (api.Memory, error) {
	e, err := s.memory()
	if err != nil {
		return api.Memory{}, err
	}
	if err := sc.check(ns); err != nil {
		return api.Memory{}, err
	}
	rec, err := e.Get(ns, id)
	if err != nil {
		return api.Memory{}, err
	}
	return apiMemory(rec.Memory, rec.Vector != nil), nil
}

func (s *Server) handleDeleteMemory(c *fiber.Ctx) error {
	if _, err := s.memory(); err != nil {
		return err
	}
	p, err := pathParams(c, "ns", "id")
	if err != nil {
		return err
	}
	resp, err := s.deleteMemory(scopeOf(c), p[0], p[1])
	if err != nil {
		return err
	}
	return c.JSON(resp)
}

func (s *Server) deleteMemory(sc scope, ns, id string) (api.DeleteResponse, error) {
	e, err := s.memory()
	if err != nil {
		return api.DeleteResponse{}, err
	}
	if err := sc.check(ns); err != nil {
		return api.DeleteResponse{}, err
	}
	if err := e.Delete(ns, id); err != nil {
		return api.DeleteResponse{}, err
	}
	return api.DeleteResponse{Deleted: true}, nil
}

func (s *Server) handleUpdateMemory(c *fiber.Ctx) error {
	if _, err := s.memory(); err != nil {
		return err
	}
	p, err := pathParams(c, "ns", "id")
	if err != nil {
		return err
	}
	req, err := decodeStrictJSON[api.UpdateMemoryRequest](c)
	if err != nil {
		return err
	}
	resp, err := s.updateMemory(c.UserContext(), scopeOf(c), p[0], p[1], req)
	if err != nil {
		return err
	}
	return c.JSON(resp)
}

// updateMemory applies a PATCH; the HTTP and MCP fronts both call it.
func (s *Server) updateMemory(ctx context.Context, sc scope, ns, id string, req *api.UpdateMemoryRequest) (api.UpdateMemoryResponse, error) {
	e, err := s.memory()
	if err != nil {
		return api.UpdateMemoryResponse{}, err
	}
	if err := sc.check(ns); err != nil {
		return api.UpdateMemoryResponse{}, err
	}
	if req.Text == nil && req.Time == nil && req.Source == nil && req.Metadata == nil && req.Vector == nil {
		return api.UpdateMemoryResponse{}, newError(KindValidation, "nothing to update: send text, time, source, metadata or vector")
	}
	p := retrieval.Patch{Text: req.Text, Time: req.Time, Source: req.Source, Vector: req.Vector}
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
			return api.UpdateMemoryResponse{}, newError(KindValidation, "%s", trimPrefix(err))
		}
		maps.Copy(p.Metadata, md)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	added, err := e.Update(ctx, ns, id, p)
	if err != nil {
		return api.UpdateMemoryResponse{}, err
	}
	rec, err := e.Get(ns, id)
	if err != nil {
		return api.UpdateMemoryResponse{}, err
	}
	return api.UpdateMemoryResponse{Memory: apiMemory(rec.Memory, rec.Vector != nil), Vector: string(added.Vector)}, nil
}

func (s *Server) handleForget(c *fiber.Ctx) error {
	if _, err := s.memory(); err != nil {
		return err
	}
	p, err := pathParams(c, "ns")
	if err != nil {
		return err
	}
	resp, err := s.forget(scopeOf(c), p[0])
	if err != nil {
		return err
	}
	return c.JSON(resp)
}

// forget deletes a whole namespace; the HTTP and MCP fronts both call it.
func (s *Server) forget(sc scope, ns string) (api.ForgetResponse, error) {
	e, err := s.memory()
	if err != nil {
		return api.ForgetResponse{}, err
	}
	if err := sc.check(ns); err != nil {
		return api.ForgetResponse{}, err
	}
	n, err := e.Forget(ns)
	if err != nil {
		return api.ForgetResponse{}, err
	}
	return api.ForgetResponse{Namespace: ns, Deleted: n}, nil
}

func (s *Server) handleNamespaces(c *fiber.Ctx) error {
	resp, err := s.namespaces(scopeOf(c))
	if err != nil {
		return err
	}
	return c.JSON(resp)
}

// namespaces lists the namespaces sc may read.
func (s *Server) namespaces(sc scope) (api.NamespacesResponse, error) {
	e, err := s.memory()
	if err != nil {
		return api.NamespacesResponse{}, err
	}
	nss, err := e.Namespaces(sc.allows)
	if err != nil {
		return api.NamespacesResponse{}, err
	}
	resp := api.NamespacesResponse{Namespaces: make([]api.NamespaceInfo, len(nss))}
	for i, n := range nss {
		resp.Namespaces[i] = api.NamespaceInfo{Namespace: n.Name, Memories: n.Memories}
	}
	return resp, nil
}

func (s *Server) handleListMemories(c *fiber.Ctx) error {
	if _, err := s.memory(); err != nil {
		return err
	}
	p, err := pathParams(c, "ns")
	if err != nil {
		return err
	}
	ns := p[0]
	if err := scopeOf(c).check(ns); err != nil {
		return err
	}
	limit := defaultListLimit
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			return newError(KindValidation, "limit %q: want an integer in 1..%d", v, maxListLimit)
		}
		limit = n
	}
	f, err := filterParam(c.Query("filter"))
	if err != nil {
		return err
	}
	resp, err := s.listMemories(scope{}, ns, c.Query("after"), limit, f)
	if err != nil {
		return err
	}
	return c.JSON(resp)
}

// listMemories pages through namespace ns; limit is already in range.
func (s *Server) listMemories(sc scope, ns, after string, limit int, f *filter.Matcher) (api.ListMemoriesResponse, error) {
	var resp api.ListMemoriesResponse
	e, err := s.memory()
	if err != nil {
		return resp, err
	}
	if err := sc.check(ns); err != nil {
		return resp, err
	}
	if after != "" {
		if err := memory.ValidateID(after); err != nil {
			return resp, newError(KindValidation, "after: %v", err)
		}
	}
	recs, next, err := e.List(ns, after, limit, f)
	if err != nil {
		return resp, err
	}
	resp = api.ListMemoriesResponse{Memories: make([]api.Memory, len(recs)), Next: next}
	for i, r := range recs {
		resp.Memories[i] = apiMemory(r.Memory, r.Vector != nil)
	}
	return resp, nil
}

func apiMemory(m memory.Memory, hasVector bool) api.Memory {
	return api.Memory{Namespace: m.Namespace, ID: m.ID, Text: m.Text, Time: m.Time, Source: m.Source,
		Metadata: m.Metadata.ToAny(), HasVector: hasVector}
}

func (s *Server) handleSearch(c *fiber.Ctx) error {
	if _, err := s.memory(); err != nil {
		return err
	}
	req, err := decodeStrictJSON[api.SearchRequest](c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.RequestTimeout)
	defer cancel()
	stop := watchDisconnect(c.Context().Conn(), cancel, 50*time.Millisecond)
	resp, err := s.search(ctx, scopeOf(c), req)
	stop()
	if err != nil {
		return err
	}
	return c.JSON(resp)
}

// search validates req and runs it through the pipeline, under ctx's
// deadline; /v1/search and MCP's memory_search are this one function.
func (s *Server) search(ctx context.Context, sc scope, req *api.SearchRequest) (api.SearchResponse, error) {
	e, err := s.memory()
	if err != nil {
		return api.SearchResponse{}, err
	}
	if err := sc.check(req.Namespace); err != nil {
		return api.SearchResponse{}, err
	}
	sr, err := s.searchRequest(req, time.Now().UTC())
	if err != nil {
		return api.SearchResponse{}, err
	}
	res, err := e.Search(ctx, sr)
	if err != nil {
		return api.SearchResponse{}, err
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	resp := api.SearchResponse{ID: requestID(), Level: string(res.Level), Vectors: res.Vectors, Degraded: res.Why,
		Reranked: sr.Rerank != nil, Results: make([]api.SearchResult, len(res.Results)),
		Counts: api.SearchCounts{Retrieved: res.Retrieved, Reranked: res.Reranked,
			AboveThreshold: res.AboveThreshold, Returned: len(res.Results)},
		TimingMs: api.SearchTiming{Retrieve: ms(res.Timing.Retrieve), Rerank: ms(res.Timing.Rerank), Post: ms(res.Timing.Post)}}
	if sr.Rerank != nil {
		resp.Backend = s.backend.Name()
	}
	for i, r := range res.Results {
		m := memory.Memory{Namespace: sr.Namespace, ID: r.ID, Text: r.Text, Time: r.Time, Source: r.Source, Metadata: r.Metadata}
		resp.Results[i] = api.SearchResult{Memory: apiMemory(m, r.Vector != nil), Score: r.Score, Scores: r.Scores}
	}
	return resp, nil
}

// searchRequest maps the API request onto the pipeline, reporting every
// invalid field at once. now is the server's clock, read here and passed
// down: the pipeline itself never reads the wall clock.
func (s *Server) searchRequest(r *api.SearchRequest, now time.Time) (retrieval.SearchRequest, error) {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	out := retrieval.SearchRequest{Query: retrieval.Query{Namespace: r.Namespace, Text: r.Query, Vector: r.Vector,
		Mode: retrieval.Mode(r.Mode)}}
	if strings.TrimSpace(r.Query) == "" {
		return out, newError(KindInvalid, "query must not be empty")
	}
	if err := memory.ValidateNamespace(r.Namespace); err != nil {
		bad("namespace: %v", err)
	}
	intIn := func(name string, p *int, lo, hi, def int) int {
		if p == nil {
			return def
		}
		if *p < lo || *p > hi {
			bad("%s %d: want %d..%d", name, *p, lo, hi)
		}
		return *p
	}
	out.TopK = intIn("top_k", r.TopK, 1, maxTopK, retrieval.DefaultTopK)
	out.Depth = intIn("depth", r.Depth, 1, maxTopK, 0)
	out.RerankDepth = intIn("rerank_depth", r.RerankDepth, 1, s.cfg.MaxDocuments, min(defaultRerankCap, s.cfg.MaxDocuments))
	doRerank := s.backend.Name() != (&Lexical{}).Name()
	if r.Rerank != nil {
		doRerank = *r.Rerank
	}
	if doRerank {
		// The one reranker adapter (eval locomo reranks through it too),
		// over the backend's scheduler queue, traced as /rerank is.
		out.Rerank = rerank.Reranker{Score: s.scoreBackend, Instruction: r.Instruction, MaxDocTokens: s.cfg.MaxTokensPerDoc}
	}
	if t := r.Threshold; t != nil {
		if !(*t >= 0 && *t <= 1) {
			bad("threshold %v: want a probability in [0, 1]", *t)
		}
		if !doRerank {
			bad("threshold needs a reranked search: send \"rerank\": true, or leave threshold out (without rerank the fused retrieval score is relative to the other candidates, the last always 0, so no threshold means the same from one search to the next)")
		}
		out.Threshold = t
	} else if doRerank {
		// A calibrated server applies its threshold to the (calibrated)
		// rerank probability by default; retrieval scores are not on that
		// scale, so without reranking there is no default.
		out.Threshold = defaultThreshold(s.backend)
	}
	if f := r.Fusion; f != nil {
		fc := post.DefaultFusionConfig()
		if f.Method != "" {
			fc.Method = post.FusionMethod(f.Method)
		}
		setF(&fc.VectorWeight, f.VectorWeight)
		setF(&fc.BM25Weight, f.BM25Weight)
		setF(&fc.RRFK, f.RRFK)
		for _, msg := range fieldErrors("fusion", fc.Validate()) {
			bad("%s", msg)
		}
		out.Fusion = &fc
	}
	if p := r.Recency; p != nil {
		rc := post.DefaultRecencyConfig()
		setF(&rc.Weight, p.Weight)
		if p.HalfLife != "" {
			d, err := time.ParseDuration(p.HalfLife)
			if err != nil {
				bad("recency.half_life %q: want a duration like \"168h\"", p.HalfLife)
			}
			rc.HalfLife = d
		}
		for _, msg := range fieldErrors("recency", rc.Validate()) {
			bad("%s", msg)
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
		for _, msg := range fieldErrors("mmr", mc.Validate()) {
			bad("%s", msg)
		}
		out.MMR = &mc
	}
	if p := r.Prefer; p != nil {
		pr := retrieval.Prefer{Weight: retrieval.DefaultPreferWeight}
		setF(&pr.Weight, p.Weight)
		if !(pr.Weight > 0 && pr.Weight <= 1) {
			bad("prefer.weight %v: want (0, 1]", pr.Weight)
		}
		if p.Filters == nil {
			bad("prefer.filters: required (the memories to favour)")
		} else if m, err := compileFilter(p.Filters); err != nil {
			bad("prefer.filters: %s", classify(err).Msg)
		} else if m == nil {
			bad("prefer.filters: empty (it would favour every memory)")
		} else {
			pr.Match = m
			out.Prefer = &pr
		}
	}
	if f, err := compileFilter(r.Filters); err != nil {
		bad("filters: %s", classify(err).Msg)
	} else {
		out.Filter = f
	}
	if p := r.Ranking; p != nil {
		rk, err := rankingOf(p)
		for _, msg := range fieldErrors("ranking", err) {
			bad("%s", msg)
		}
		out.Ranking = &rk
	}
	if len(probs) > 0 {
		return out, newError(KindValidation, "%s", strings.Join(probs, "; "))
	}
	return out, nil
}

// rankingOf maps the API's ranking onto retrieval's: the named ranking,
// then each field given; every problem is reported at once.
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
	return rk, rk.Validate()
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

// fieldErrors names each of the problems in err (one, or several joined)
// by its place in the request: "recency.half_life 0s: want ...".
func fieldErrors(parent string, err error) []string {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, parent+"."+e.Error())
	}
	return out
}

// classifyRetrieval maps the retrieval package's errors to kinds.
func classifyRetrieval(err error) *Error {
	switch {
	case errors.Is(err, retrieval.ErrNotFound):
		return &Error{Kind: KindNotFound, Msg: trimPrefix(err), Err: err}
	case errors.Is(err, retrieval.ErrNoVectors):
		return &Error{Kind: KindValidation, Msg: trimPrefix(err) + ": this server has no vector dimension; start it with --vector-dim N (the vectors' length) or --embed-model DIR", Err: err}
	case errors.Is(err, retrieval.ErrInvalid):
		return &Error{Kind: KindValidation, Msg: trimPrefix(err), Err: err}
	case errors.Is(err, retrieval.ErrClosed):
		return &Error{Kind: KindNotReady, Msg: "server is shutting down", Err: err}
	case errors.Is(err, retrieval.ErrUnavailable) && (errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrIncompatible)):
		// The database itself: its address, user and messages are for the
		// operator (log, /info), not for every caller.
		return &Error{Kind: KindUnavailable, Msg: "memory store unavailable: the shared database cannot be used now (the cause is in the server log and in /info); nothing was written or answered from stale data; retry", Err: err}
	case errors.Is(err, retrieval.ErrUnavailable):
		return &Error{Kind: KindUnavailable, Msg: trimPrefix(err) + " (nothing was written or answered from stale data; retry)", Err: err}
	case errors.Is(err, retrieval.ErrStorage):
		return &Error{Kind: KindInternal, Msg: "memory store error (disk full, I/O error or a damaged record; a failed write is not applied)", Err: err}
	case errors.Is(err, retrieval.ErrEmbed):
		return &Error{Kind: KindBackend, Msg: "embedding failed", Err: err}
	}
	return nil
}

// trimPrefix keeps client-facing messages free of Go package prefixes: a
// segment of the message ("a: b: c") that is only a package's name is
// dropped. Only whole segments go, so "pgstore: ping" stays as written
// (a blanket replacement of "store: " once made it "pgping").
func trimPrefix(err error) string {
	segs := strings.Split(err.Error(), ": ")
	keep := segs[:0]
	for _, seg := range segs {
		if seg == "retrieval" || seg == "store" || seg == "pgstore" {
			continue
		}
		keep = append(keep, seg)
	}
	return strings.Join(keep, ": ")
}
