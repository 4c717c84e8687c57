package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rerankd/rerankd/api"
)

// MCPOptions configure the MCP front.
type MCPOptions struct {
	// Namespace is used by memory tools called without one.
	Namespace string
	// Version is reported to clients as the server's implementation version.
	Version string
}

// The tools' arguments. Field comments are for Go readers; the jsonschema
// tags are what a model reads in tools/list.
type (
	mcpAddArgs struct {
		Namespace string         `json:"namespace,omitempty" jsonschema:"The memory namespace (a user, agent or project). Letters, digits and . _ - : only. Omit it for the server's default namespace."`
		Text      string         `json:"text" jsonschema:"The memory itself: a fact, preference, decision or event, in plain language. Valid UTF-8, at most 1 MiB."`
		ID        string         `json:"id,omitempty" jsonschema:"An ID unique within the namespace. Adding an existing ID replaces that memory. Generated when omitted."`
		Time      *time.Time     `json:"time,omitempty" jsonschema:"When the memory was formed, as an RFC 3339 time (2025-01-31T09:00:00Z). Defaults to now. Recency ranking uses it."`
		Source    string         `json:"source,omitempty" jsonschema:"Optional provenance: the file, tool, conversation or working directory it came from."`
		Metadata  map[string]any `json:"metadata,omitempty" jsonschema:"Optional key/value pairs kept with the memory and returned with it; each value a string, a number or a boolean (e.g. {\"kind\":\"fact\",\"priority\":2,\"done\":false}). Search filters can select by them."`
		Vector    []float32      `json:"vector,omitempty" jsonschema:"Optional embedding of text computed by the caller; only when the server runs without its own embedding model."`
	}
	mcpSearchArgs struct {
		Query     string             `json:"query" jsonschema:"What to recall, as a question or a description of the memories wanted."`
		Namespace string             `json:"namespace,omitempty" jsonschema:"The namespace to search. Omit it for the server's default namespace."`
		TopK      *int               `json:"top_k,omitempty" jsonschema:"How many memories to return at most (1..1000, default 10)."`
		Threshold *float64           `json:"threshold,omitempty" jsonschema:"Drop memories scoring below this (0..1). With reranking it is the probability that a memory is relevant; the server's calibrated threshold applies when omitted."`
		Recency   *api.RecencyParams `json:"recency,omitempty" jsonschema:"Favour recent memories: weight (default 0.1) blends in an exponential decay by age with half_life (a Go duration such as 168h). Omit it to rank by relevance alone."`
		MMR       *api.MMRParams     `json:"mmr,omitempty" jsonschema:"Diversify results with maximal marginal relevance: lambda (0..1, default 0.7) trades relevance against novelty over the best window (default 20) candidates. Omit it for no diversification."`
		Rerank    *bool              `json:"rerank,omitempty" jsonschema:"Score candidates with the cross-encoder reranker. Defaults to true when the server has a model."`
		Prefer    *api.PreferParams  `json:"prefer,omitempty" jsonschema:"Favour, without excluding the others, the memories matching prefer.filters (the shape of filters), e.g. the current project: {\"filters\":{\"must\":[{\"key\":\"source\",\"match\":{\"value\":\"/home/me/proj\"}}]},\"weight\":0.2}. weight (0..1, default 0.1) is blended into the score."`
		Filters   *api.Filter        `json:"filters,omitempty" jsonschema:"Recall only memories matching this filter (Qdrant's shape): {\"must\":[{\"key\":\"kind\",\"match\":{\"value\":\"fact\"}},{\"key\":\"time\",\"range\":{\"gte\":\"2025-01-01T00:00:00Z\"}}],\"should\":[...],\"must_not\":[...]}. match takes value, any (in) or except (not in); range takes gt, gte, lt, lte (numbers, or RFC 3339 times); {\"is_empty\":{\"key\":\"k\"}} matches memories without k. Keys: time, source, id, or a metadata key."`
	}
	mcpListArgs struct {
		Namespace string      `json:"namespace,omitempty" jsonschema:"The namespace to list. Omit it for the server's default namespace."`
		Limit     *int        `json:"limit,omitempty" jsonschema:"How many memories per page (1..1000, default 100)."`
		Cursor    string      `json:"cursor,omitempty" jsonschema:"The next value of the previous page, to continue after it. Omit it for the first page."`
		Filters   *api.Filter `json:"filters,omitempty" jsonschema:"List only memories matching this filter (the shape of memory_search's filters)."`
	}
	mcpDeleteArgs struct {
		Namespace string `json:"namespace,omitempty" jsonschema:"The namespace holding the memory. Omit it for the server's default namespace."`
		ID        string `json:"id" jsonschema:"The ID of the memory to delete, as returned by memory_add, memory_search or memory_list."`
	}
	mcpGetArgs struct {
		Namespace string `json:"namespace,omitempty" jsonschema:"The namespace holding the memory. Omit it for the server's default namespace."`
		ID        string `json:"id" jsonschema:"The ID of the memory, as returned by memory_add, memory_search or memory_list."`
	}
	mcpUpdateArgs struct {
		Namespace string         `json:"namespace,omitempty" jsonschema:"The namespace holding the memory. Omit it for the server's default namespace."`
		ID        string         `json:"id" jsonschema:"The ID of the memory to change."`
		Text      *string        `json:"text,omitempty" jsonschema:"The corrected memory text; it is embedded and indexed again."`
		Time      *time.Time     `json:"time,omitempty" jsonschema:"A new RFC 3339 time for the memory."`
		Source    *string        `json:"source,omitempty" jsonschema:"A new provenance."`
		Metadata  map[string]any `json:"metadata,omitempty" jsonschema:"Metadata keys to set (strings, numbers, booleans); a key set to null is removed; other keys are kept."`
		Vector    []float32      `json:"vector,omitempty" jsonschema:"A new embedding computed by the caller; only when the server runs without its own embedding model."`
	}
	mcpForgetArgs struct {
		Namespace string `json:"namespace" jsonschema:"The namespace whose memories are all deleted, for good. Required: there is no default here."`
	}
	mcpRerankArgs struct {
		Query       string    `json:"query" jsonschema:"The query the documents are ranked against."`
		Documents   []*string `json:"documents" jsonschema:"The candidate texts to rank, at most the server's max_documents."`
		TopN        *int      `json:"top_n,omitempty" jsonschema:"Keep only the best N documents (>= 1). Omit it for all."`
		Instruction string    `json:"instruction,omitempty" jsonschema:"Replaces the reranker's default task instruction, e.g. 'Given a bug report, find the commit that fixes it'."`
	}
)

// mcpTool is one tool: its description for the model, the schema of its
// arguments, and the call into the pipeline shared with the HTTP API.
type mcpTool struct {
	name, desc string
	schema     func() (*jsonschema.Schema, error)
	call       func(ctx context.Context, s *Server, sc scope, args []byte, o MCPOptions) (any, error)
}

func schemaOf[T any]() func() (*jsonschema.Schema, error) {
	return func() (*jsonschema.Schema, error) { return jsonschema.For[T](schemaOptions) }
}

// schemaOptions describe the types the schema inference cannot: a filter
// condition nests filters (a cycle), and is described to the model in
// its field's description instead.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[api.Condition](): {Type: "object", Description: "A condition: {key, match} or {key, range}, {is_empty: {key}}, or a nested filter (must, should, must_not)."},
}}

// orDefault is the namespace a memory tool uses.
func orDefault(ns string, o MCPOptions) string {
	if ns == "" {
		return o.Namespace
	}
	return ns
}

var mcpTools = []mcpTool{
	{name: "memory_add", schema: schemaOf[mcpAddArgs](),
		desc: "Store one memory (a fact, preference, decision or event) so that memory_search can recall it later. " +
			"Returns the namespace and ID it was stored under.",
		call: func(ctx context.Context, s *Server, sc scope, raw []byte, o MCPOptions) (any, error) {
			a, err := decodeStrictBody[mcpAddArgs](raw)
			if err != nil {
				return nil, err
			}
			req := &api.AddMemoriesRequest{MemoryIn: api.MemoryIn{Namespace: orDefault(a.Namespace, o), ID: a.ID,
				Text: a.Text, Time: a.Time, Source: a.Source, Metadata: a.Metadata, Vector: a.Vector}}
			return s.addMemories(ctx, sc, req)
		}},
	{name: "memory_search", schema: schemaOf[mcpSearchArgs](),
		desc: "Recall the memories most relevant to a query: hybrid keyword and vector retrieval, reranked by a cross-encoder, " +
			"optionally favouring recent memories (recency) and diverse ones (mmr). Results are best first, each with its score.",
		call: func(ctx context.Context, s *Server, sc scope, raw []byte, o MCPOptions) (any, error) {
			a, err := decodeStrictBody[mcpSearchArgs](raw)
			if err != nil {
				return nil, err
			}
			req := &api.SearchRequest{Namespace: orDefault(a.Namespace, o), Query: a.Query, TopK: a.TopK,
				Threshold: a.Threshold, Recency: a.Recency, MMR: a.MMR, Rerank: a.Rerank, Filters: a.Filters, Prefer: a.Prefer}
			ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
			defer cancel()
			return s.search(ctx, sc, req)
		}},
	{name: "memory_list", schema: schemaOf[mcpListArgs](),
		desc: "List the memories of a namespace in ID order, one page at a time; pass the answer's next as cursor for the following page.",
		call: func(_ context.Context, s *Server, sc scope, raw []byte, o MCPOptions) (any, error) {
			a, err := decodeStrictBody[mcpListArgs](raw)
			if err != nil {
				return nil, err
			}
			return s.listMemories(sc, orDefault(a.Namespace, o), a.Cursor, a.Limit, a.Filters)
		}},
	{name: "memory_delete", schema: schemaOf[mcpDeleteArgs](),
		desc: "Delete one memory by its ID, e.g. when it is wrong or no longer true.",
		call: func(_ context.Context, s *Server, sc scope, raw []byte, o MCPOptions) (any, error) {
			a, err := decodeStrictBody[mcpDeleteArgs](raw)
			if err != nil {
				return nil, err
			}
			return s.deleteMemory(sc, orDefault(a.Namespace, o), a.ID)
		}},
	{name: "memory_get", schema: schemaOf[mcpGetArgs](),
		desc: "Read one memory by its ID: its text, time, source and metadata.",
		call: func(_ context.Context, s *Server, sc scope, raw []byte, o MCPOptions) (any, error) {
			a, err := decodeStrictBody[mcpGetArgs](raw)
			if err != nil {
				return nil, err
			}
			return s.getMemory(sc, orDefault(a.Namespace, o), a.ID)
		}},
	{name: "memory_update", schema: schemaOf[mcpUpdateArgs](),
		desc: "Correct or extend one memory in place (text, time, source, metadata), e.g. when a fact changed. " +
			"Only the fields given change; metadata keys are merged. Returns the memory as stored now.",
		call: func(ctx context.Context, s *Server, sc scope, raw []byte, o MCPOptions) (any, error) {
			a, err := decodeStrictBody[mcpUpdateArgs](raw)
			if err != nil {
				return nil, err
			}
			req := &api.UpdateMemoryRequest{Text: a.Text, Time: a.Time, Source: a.Source, Metadata: a.Metadata, Vector: a.Vector}
			return s.updateMemory(ctx, sc, orDefault(a.Namespace, o), a.ID, req)
		}},
	{name: "memory_forget", schema: schemaOf[mcpForgetArgs](),
		desc: "Delete every memory of a namespace, for good (a user's \"forget me\" request). Returns how many were deleted.",
		call: func(_ context.Context, s *Server, sc scope, raw []byte, _ MCPOptions) (any, error) {
			a, err := decodeStrictBody[mcpForgetArgs](raw)
			if err != nil {
				return nil, err
			}
			if a.Namespace == "" {
				return nil, newError(KindValidation, "namespace: required (memory_forget deletes a whole namespace, so it is never the default)")
			}
			return s.forget(sc, a.Namespace)
		}},
	{name: "rerank", schema: schemaOf[mcpRerankArgs](),
		desc: "Rank candidate texts by relevance to a query with the cross-encoder reranker. Returns the documents best first, " +
			"each with its index in documents, its text and a relevance score (a probability in 0..1).",
		call: func(ctx context.Context, s *Server, _ scope, raw []byte, _ MCPOptions) (any, error) {
			a, err := decodeStrictBody[mcpRerankArgs](raw)
			if err != nil {
				return nil, err
			}
			req := &api.RerankRequest{Query: a.Query, TopN: a.TopN, Instruction: a.Instruction, ReturnDocuments: true}
			if a.Documents != nil {
				req.Documents = make([]api.Document, len(a.Documents))
				for i, d := range a.Documents {
					if d == nil { // a JSON null is no text: /rerank answers it 422 too
						return nil, newError(KindValidation, "documents: document %d: not a JSON string but null", i)
					}
					req.Documents[i] = api.Document{Text: *d}
				}
			}
			ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
			defer cancel()
			rr, err := s.rerank(ctx, req)
			if err != nil {
				return nil, err
			}
			return s.rerankResponse(req, rr), nil
		}},
}

// NewMCP builds the MCP server whose tools call this server's pipeline.
// Over stdio every namespace is open (the operator runs the process); over
// HTTP the caller's key scopes it (see HandleMCP).
func (s *Server) NewMCP(o MCPOptions) (*mcp.Server, error) {
	ms := mcp.NewServer(&mcp.Implementation{Name: "rerankd", Version: o.Version}, nil)
	for _, t := range mcpTools {
		in, err := t.schema()
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: schema: %w", t.name, err)
		}
		// Encoded once: the SDK re-reads a tool's schema on every call (for
		// its header checks), and encoding a *jsonschema.Schema each time
		// cost more than the search it fronts.
		raw, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: schema: %w", t.name, err)
		}
		ms.AddTool(&mcp.Tool{Name: t.name, Description: t.desc, InputSchema: json.RawMessage(raw)}, s.mcpHandler(t, o))
	}
	return ms, nil
}

// mcpHandler adapts t to the SDK. Arguments are decoded by t itself, not
// validated against the schema by the SDK, so a bad argument gets the HTTP
// API's message; every failure is a tool error (isError), which the model
// can read and correct, never a JSON-RPC error.
func (s *Server) mcpHandler(t mcpTool, o MCPOptions) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := []byte(req.Params.Arguments)
		if len(raw) == 0 || string(raw) == "null" {
			raw = []byte("{}")
		}
		sc, err := s.mcpScope(req.Extra)
		var out any
		if err == nil {
			out, err = t.call(ctx, s, sc, raw, o)
		}
		if err != nil {
			e := classify(err)
			if e.Status() >= 500 || e.Kind == KindBackend {
				s.log.ErrorContext(ctx, "mcp tool failed", "tool", t.name, "kind", e.Kind, "err", e.Err)
			}
			body := api.NewError(e.Msg, string(e.Kind))
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: e.Msg}}, StructuredContent: body}, nil
		}
		text, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: encode result: %w", t.name, err)
		}
		// The encoded bytes serve as both forms: the SDK copies a RawMessage
		// rather than encoding the response a second time.
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: json.RawMessage(text)}, nil
	}
}

// mcpScope is the caller's namespace scope: over HTTP the key in the
// request's Authorization header (the auth middleware has let it through),
// over stdio (no headers) unrestricted.
func (s *Server) mcpScope(extra *mcp.RequestExtra) (scope, error) {
	if extra == nil || extra.Header == nil || !s.keys.enabled() {
		return scope{}, nil
	}
	scheme, key, _ := strings.Cut(strings.TrimSpace(extra.Header.Get(fiber.HeaderAuthorization)), " ")
	sc, ok := s.keys.lookup(strings.TrimSpace(key))
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return scope{}, newError(KindUnauthorized, "missing or invalid API key")
	}
	return sc, nil
}

// WithMCP serves ms on /mcp (streamable HTTP), behind the API keys; call
// before Serve. The fiber adaptor buffers a net/http handler's whole
// answer (its Flush does nothing), so the handler runs stateless with JSON
// answers: each POST is answered in full, no stream is held open, and any
// replica can answer any request.
func (s *Server) WithMCP(ms *mcp.Server) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
	// The adaptor hands the handler the fasthttp request as its context;
	// put the fiber user context (with the route's span) back in its place.
	s.mcp = adaptor.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if uc, ok := r.Context().Value(mcpUserContext{}).(context.Context); ok {
			r = r.WithContext(uc)
		}
		h.ServeHTTP(w, r)
	}))
}

// mcpUserContext keys the fiber user context among fasthttp's user values.
type mcpUserContext struct{}

// handleMCP answers /mcp; 404 until WithMCP.
func (s *Server) handleMCP(c *fiber.Ctx) error {
	if s.mcp == nil {
		return newError(KindNotFound, "MCP disabled on this server")
	}
	c.Context().SetUserValue(mcpUserContext{}, c.UserContext())
	body := c.Body()
	if !json.Valid(body) {
		return mcpHTTPError(c, fiber.StatusBadRequest, nil, -32700, "parse error: the body is not JSON")
	}
	if err := s.mcp(c); err != nil {
		return err
	}
	// The SDK answers some failures (an unknown method, a message it
	// cannot take) in plain text; a JSON-RPC client expects an error
	// object with the request's id.
	if sc := c.Response().StatusCode(); sc >= 400 && !strings.HasPrefix(string(c.Response().Header.ContentType()), fiber.MIMEApplicationJSON) {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &probe)
		msg := strings.TrimSpace(string(c.Response().Body()))
		code := -32600
		if strings.Contains(msg, "not handled") {
			code, msg = -32601, "method not found"
		}
		return mcpHTTPError(c, sc, probe.ID, code, msg)
	}
	return nil
}

// mcpHTTPError answers with a JSON-RPC error object; an id that is not a
// string or number is sent as null.
func mcpHTTPError(c *fiber.Ctx, status int, id json.RawMessage, code int, msg string) error {
	var v any
	if json.Unmarshal(id, &v) != nil {
		v = nil
	}
	switch v.(type) {
	case string, float64:
	default:
		id = json.RawMessage("null")
	}
	c.Response().ResetBody()
	return c.Status(status).JSON(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
}
