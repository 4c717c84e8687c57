package serve

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
)

// WithMemory enables the memory API on m; call before Serve. Without it
// the memory routes answer 404 saying the API is disabled. m reranks
// with the scorer its configuration was handed (retrieval.Config.Rerank),
// the one this server's /rerank scores with.
func (s *Server) WithMemory(m *retrieval.Service) {
	s.mem = m
	if m == nil {
		return
	}
	s.metrics.watchService(m.Totals)
	if m.Shared() {
		s.metrics.watchFollower(m.Follow)
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

// addMemories writes one request's memories (mapped and checked by the
// memory service, the key's scope checked here); the HTTP and
// MCP fronts both call it, so they answer the same input the same way.
func (s *Server) addMemories(ctx context.Context, sc scope, req *api.AddMemoriesRequest) (api.AddMemoriesResponse, error) {
	var resp api.AddMemoriesResponse
	svc, err := s.memory()
	if err != nil {
		return resp, err
	}
	items, err := retrieval.ItemsOf(req, time.Now().UTC(), requestID)
	if err != nil {
		return resp, err
	}
	for _, it := range items {
		if err := sc.check(it.Memory.Namespace); err != nil {
			return resp, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	added, err := svc.Add(ctx, items)
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
	svc, err := s.memory()
	if err != nil {
		return api.Memory{}, err
	}
	if err := sc.check(ns); err != nil {
		return api.Memory{}, err
	}
	rec, err := svc.Get(ns, id)
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
	svc, err := s.memory()
	if err != nil {
		return api.DeleteResponse{}, err
	}
	if err := sc.check(ns); err != nil {
		return api.DeleteResponse{}, err
	}
	if err := svc.Delete(ns, id); err != nil {
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
	svc, err := s.memory()
	if err != nil {
		return api.UpdateMemoryResponse{}, err
	}
	if err := sc.check(ns); err != nil {
		return api.UpdateMemoryResponse{}, err
	}
	p, err := retrieval.PatchOf(req)
	if err != nil {
		return api.UpdateMemoryResponse{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	added, err := svc.Update(ctx, ns, id, p)
	if err != nil {
		return api.UpdateMemoryResponse{}, err
	}
	rec, err := svc.Get(ns, id)
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
	svc, err := s.memory()
	if err != nil {
		return api.ForgetResponse{}, err
	}
	if err := sc.check(ns); err != nil {
		return api.ForgetResponse{}, err
	}
	n, err := svc.Forget(ns)
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
	svc, err := s.memory()
	if err != nil {
		return api.NamespacesResponse{}, err
	}
	nss, err := svc.Namespaces(sc.allows)
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
	var limit *int
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return newError(KindValidation, "limit %q: want an integer in 1..%d", v, retrieval.MaxListLimit)
		}
		limit = &n
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

// listMemories pages through namespace ns (limit nil: the default
// page); the HTTP and MCP fronts both call it.
func (s *Server) listMemories(sc scope, ns, after string, limit *int, f *api.Filter) (api.ListMemoriesResponse, error) {
	var resp api.ListMemoriesResponse
	svc, err := s.memory()
	if err != nil {
		return resp, err
	}
	if err := sc.check(ns); err != nil {
		return resp, err
	}
	n, err := retrieval.ListPage(limit, after)
	if err != nil {
		return resp, err
	}
	m, err := retrieval.CompileFilter(f)
	if err != nil {
		return resp, err
	}
	recs, next, err := svc.List(ns, after, n, m)
	if err != nil {
		return resp, err
	}
	resp = api.ListMemoriesResponse{Memories: make([]api.Memory, len(recs)), Next: next}
	for i, r := range recs {
		resp.Memories[i] = apiMemory(r.Memory, r.Vector != nil)
	}
	return resp, nil
}

func apiMemory(m retrieval.Memory, hasVector bool) api.Memory {
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

// search runs req through the memory service's pipeline (which applies
// its defaults and validates it), under ctx's deadline; /v1/search and
// MCP's memory_search are this one function.
func (s *Server) search(ctx context.Context, sc scope, req *api.SearchRequest) (api.SearchResponse, error) {
	svc, err := s.memory()
	if err != nil {
		return api.SearchResponse{}, err
	}
	if err := sc.check(req.Namespace); err != nil {
		return api.SearchResponse{}, err
	}
	sr, err := svc.SearchRequestOf(req, time.Now().UTC())
	if err != nil {
		return api.SearchResponse{}, err
	}
	res, err := svc.Search(ctx, sr)
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
		m := retrieval.Memory{Namespace: sr.Namespace, ID: r.ID, Text: r.Text, Time: r.Time, Source: r.Source, Metadata: r.Metadata}
		resp.Results[i] = api.SearchResult{Memory: apiMemory(m, r.Vector != nil), Score: r.Score, Scores: r.Scores}
	}
	return resp, nil
}
