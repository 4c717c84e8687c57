package serve

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/embed"
)

// The API keys of the examples' server, as the document's info.description
// states them.
const (
	exampleAdminKey = "admin-key-0001" // unrestricted
	exampleAliceKey = "alice-key-0001" // scoped to alice and alice:*
)

// oaExample is a request example and the x- fields that say how to send it
// and what the server answers. TestOpenAPIExamples replays every example
// against the real handlers in ascending x-order (then path, method and
// name) and checks the documented x-status, x-error-type and response
// schema. x-order: later examples rely on memories that earlier ones
// added; x-path and x-query: path and query parameters, for operations
// without a body (those examples are in the operation's x-examples);
// x-api-key: the key sent ("" sends none; absent: an unrestricted key);
// x-content-type and x-body: a non-JSON content type, or a body sent
// verbatim instead of value; x-server "no-memory": a server started with
// --store none, "embed": one with a test embedder (withFakeEmbedder).
type oaExample struct {
	Summary     string            `json:"summary"`
	Status      int               `json:"x-status"`
	ErrorType   string            `json:"x-error-type"`
	Order       int               `json:"x-order"`
	Path        map[string]string `json:"x-path"`
	Query       map[string]string `json:"x-query"`
	APIKey      *string           `json:"x-api-key"`
	ContentType string            `json:"x-content-type"`
	Body        *string           `json:"x-body"`
	Server      string            `json:"x-server"`
	Value       json.RawMessage   `json:"value"`
}

type oaParam struct {
	Ref  string `json:"$ref"`
	Name string `json:"name"`
	In   string `json:"in"`
}

type oaOperation struct {
	RequestBody *struct {
		Content map[string]struct {
			Examples map[string]oaExample `json:"examples"`
		} `json:"content"`
	} `json:"requestBody"`
	// Examples holds the examples of operations without a body.
	Examples   map[string]oaExample `json:"x-examples"`
	Parameters []oaParam            `json:"parameters"`
	Responses  map[string]struct {
		Content map[string]struct {
			Schema oaSchema `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

type oaSchema struct {
	Ref        string              `json:"$ref"`
	Type       string              `json:"type"`
	Required   []string            `json:"required"`
	Properties map[string]oaSchema `json:"properties"`
	Enum       []string            `json:"enum"`
	OneOf      []oaSchema          `json:"oneOf"`
}

// oaOp is one documented operation; aliases of a path get their own.
type oaOp struct {
	path, method string
	op           *oaOperation
}

type oaDoc struct {
	OpenAPI    string
	ops        []oaOp
	parameters map[string]oaParam
	schemas    map[string]oaSchema
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func loadOpenAPI(t *testing.T) oaDoc {
	t.Helper()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]oaParam  `json:"parameters"`
			Schemas    map[string]oaSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") || len(doc.Paths) == 0 {
		t.Fatalf("not an OpenAPI 3.1 document (openapi %q)", doc.OpenAPI)
	}
	out := oaDoc{OpenAPI: doc.OpenAPI, parameters: doc.Components.Parameters, schemas: doc.Components.Schemas}
	for path, item := range doc.Paths {
		var aliases []string
		if a, ok := item["x-aliases"]; ok {
			if err := json.Unmarshal(a, &aliases); err != nil {
				t.Fatalf("%s x-aliases: %v", path, err)
			}
		}
		for method, rawOp := range item {
			if !slices.Contains(httpMethods, method) {
				continue
			}
			op := new(oaOperation)
			if err := json.Unmarshal(rawOp, op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			for _, p := range append([]string{path}, aliases...) {
				out.ops = append(out.ops, oaOp{path: p, method: method, op: op})
			}
		}
	}
	slices.SortFunc(out.ops, func(a, b oaOp) int { return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.method, b.method)) })
	return out
}

// param resolves a parameter reference.
func (d oaDoc) param(p oaParam) oaParam {
	if name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/"); ok {
		return d.parameters[name]
	}
	return p
}

// exampleRun is one example and the operation it belongs to.
type exampleRun struct {
	oaOp
	name string
	ex   oaExample
}

// examples returns every request example of the canonical paths (not
// aliases), in run order: x-order, then path, method and name.
func (d oaDoc) examples() []exampleRun {
	var runs []exampleRun
	seen := map[*oaOperation]bool{}
	for _, o := range d.ops {
		if seen[o.op] {
			continue
		}
		seen[o.op] = true
		exs := o.op.Examples
		if o.op.RequestBody != nil {
			exs = o.op.RequestBody.Content["application/json"].Examples
		}
		for name, ex := range exs {
			runs = append(runs, exampleRun{o, name, ex})
		}
	}
	slices.SortFunc(runs, func(a, b exampleRun) int {
		return cmp.Or(cmp.Compare(a.ex.Order, b.ex.Order), cmp.Compare(a.path, b.path),
			cmp.Compare(a.method, b.method), cmp.Compare(a.name, b.name))
	})
	return runs
}

var placeholder = regexp.MustCompile(`\{([^}]+)\}`)

// target builds the example's URL path and query from x-path and x-query.
func (d oaDoc) target(t *testing.T, r exampleRun) string {
	t.Helper()
	used := 0
	p := placeholder.ReplaceAllStringFunc(r.path, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := r.ex.Path[name]
		if !ok {
			t.Errorf("%s %s example %q: no x-path value for {%s}", r.method, r.path, r.name, name)
		}
		used++
		return url.PathEscape(v)
	})
	if used != len(r.ex.Path) {
		t.Errorf("%s %s example %q: x-path %v names parameters the path lacks", r.method, r.path, r.name, r.ex.Path)
	}
	if len(r.ex.Query) == 0 {
		return p
	}
	q := url.Values{}
	for k, v := range r.ex.Query {
		known := false
		for _, prm := range r.op.Parameters {
			prm = d.param(prm)
			known = known || (prm.In == "query" && prm.Name == k)
		}
		if !known {
			t.Errorf("%s %s example %q: x-query %q is not a documented query parameter", r.method, r.path, r.name, k)
		}
		q.Set(k, v)
	}
	return p + "?" + q.Encode()
}

// TestOpenAPIExamples replays every documented request example against the
// real handlers, in the document's order, and checks the documented status,
// error type and response schema, and that every answer makes sense for its
// request, so the document cannot drift from the server. The memory examples
// build on each other: the adds (x-order 1) seed the memories that the reads
// and searches (2), the deletes (3) and the reads after them (4) refer to.
func TestOpenAPIExamples(t *testing.T) {
	doc := loadOpenAPI(t)
	cfg := DefaultConfig()
	cfg.APIKeys = []string{exampleAdminKey, exampleAliceKey}
	cfg.KeyScopes = map[string][]string{exampleAliceKey: {"alice", "alice:*"}}
	rcfg := retrieval.DefaultConfig()
	rcfg.Dim = 4 // --vector-dim 4
	servers := map[string]string{
		"":          startMemory(t, cfg, &fakeBackend{}, rcfg),
		"no-memory": start(t, cfg, &fakeBackend{}),
		"embed":     start(t, cfg, &fakeBackend{}, withFakeEmbedder(t, &fakeEmbedModel{dim: 8, matryoshka: true}, 64)),
	}
	checked := map[string]int{}
	for _, r := range doc.examples() {
		base, ok := servers[r.ex.Server]
		if !ok {
			t.Errorf("%s %s example %q: unknown x-server %q", r.method, r.path, r.name, r.ex.Server)
			continue
		}
		ctype, body := "", ""
		if r.op.RequestBody != nil {
			ctype, body = cmp.Or(r.ex.ContentType, "application/json"), string(r.ex.Value)
			if r.ex.Body != nil {
				body = *r.ex.Body
			}
		}
		key := exampleAdminKey
		if r.ex.APIKey != nil {
			key = *r.ex.APIKey
		}
		var hdr []string
		if key != "" {
			hdr = []string{"Authorization", "Bearer " + key}
		}
		resp := do(t, strings.ToUpper(r.method), base+doc.target(t, r), ctype, body, hdr...)
		where := r.method + " " + r.path + " example " + strconv.Quote(r.name)
		if resp.code != r.ex.Status {
			t.Errorf("%s: status %d, documented %d (%s)", where, resp.code, r.ex.Status, resp.body)
			continue
		}
		documented, ok := r.op.Responses[strconv.Itoa(r.ex.Status)]
		if !ok {
			t.Errorf("%s: status %d is not among the documented responses", where, r.ex.Status)
		}
		checked[r.path]++
		if r.ex.Status >= 300 {
			if slices.Contains(openAIRoutes, r.path) {
				if e := openAIErr(t, resp); *e.Code != r.ex.ErrorType {
					t.Errorf("%s: code %q, documented %q", where, *e.Code, r.ex.ErrorType)
				}
				continue
			}
			checkError(t, resp, r.ex.Status, Kind(r.ex.ErrorType))
			continue
		}
		if r.ex.ErrorType != "" {
			t.Errorf("%s: a %d example with x-error-type %q", where, r.ex.Status, r.ex.ErrorType)
		}
		if r.path == "/rerank" {
			checkRerankExample(t, where, r.ex, resp)
			continue
		}
		if checkEmbedExample(t, where, r, resp) {
			continue
		}
		ref := documented.Content["application/json"].Schema.Ref
		checkMemoryExample(t, where, strings.TrimPrefix(ref, "#/components/schemas/"), r, resp, base)
	}
	for _, p := range []string{"/rerank", "/v1/memories", "/v1/memories/{namespace}", "/v1/memories/{namespace}/{id}", "/v1/search", "/v1/embeddings", "/embed", "/tokenize"} {
		if checked[p] < 4 {
			t.Errorf("%s: only %d examples checked", p, checked[p])
		}
	}
}

func checkRerankExample(t *testing.T, where string, ex oaExample, r response) {
	t.Helper()
	var req api.RerankRequest
	_ = json.Unmarshal(ex.Value, &req)
	if req.TEIStyle() {
		var list []api.TEIResult
		decodeStrict(t, r, &list)
		if len(list) != len(req.Texts) {
			t.Errorf("%s: %d TEI results for %d texts", where, len(list), len(req.Texts))
		}
		return
	}
	var resp api.RerankResponse
	decodeStrict(t, r, &resp)
	if resp.ID == "" || resp.Backend == "" || (req.TopN != nil && len(resp.Results) > *req.TopN) {
		t.Errorf("%s: response %s", where, r.body)
	}
}

// decodeStrict decodes a whole body into v, refusing fields v lacks.
func decodeStrict(t *testing.T, r response, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Errorf("decode %s into %T: %v", r.body, v, err)
	}
}

var generatedID = regexp.MustCompile(`^[0-9a-f]{24}$`)

// checkMemoryExample decodes a 2xx memory answer into the api type that the
// document names for it and checks it against the request.
func checkMemoryExample(t *testing.T, where, schema string, r exampleRun, resp response, base string) {
	t.Helper()
	bad := func(format string, a ...any) {
		t.Helper()
		t.Errorf("%s: "+format+"\n%s", append(append([]any{where}, a...), resp.body)...)
	}
	admin := []string{"Authorization", "Bearer " + exampleAdminKey}
	switch schema {
	case "AddMemoriesResponse":
		var req api.AddMemoriesRequest
		var out api.AddMemoriesResponse
		_ = json.Unmarshal(r.ex.Value, &req)
		decodeStrict(t, resp, &out)
		ins := req.Memories
		if ins == nil {
			ins = []api.MemoryIn{req.MemoryIn}
		}
		if len(out.Added) != len(ins) {
			bad("%d added for %d memories", len(out.Added), len(ins))
			return
		}
		for i, in := range ins {
			a := out.Added[i]
			want := "none"
			if in.Vector != nil {
				want = "zero_refused"
				if embed.Check(in.Vector, 4) == nil { // --vector-dim 4
					want = "indexed"
				}
			}
			switch {
			case a.Namespace != cmp.Or(in.Namespace, req.Namespace):
				bad("added[%d] in namespace %q", i, a.Namespace)
			case in.ID != "" && a.ID != in.ID, in.ID == "" && !generatedID.MatchString(a.ID):
				bad("added[%d] has ID %q", i, a.ID)
			case a.Vector != want:
				bad("added[%d] vector %q, want %q", i, a.Vector, want)
			}
			// Acknowledged means stored: it reads back at once.
			g := do(t, http.MethodGet, base+"/v1/memories/"+a.Namespace+"/"+a.ID, "", "", admin...)
			var m api.Memory
			decodeStrict(t, g, &m)
			if g.code != 200 || m.Text != in.Text || m.HasVector != (want == "indexed") ||
				(in.Time != nil && !m.Time.Equal(*in.Time)) || (in.Time == nil && time.Since(m.Time) > time.Minute) {
				bad("added[%d] reads back as %d %s", i, g.code, g.body)
			}
		}
	case "Memory":
		var m api.Memory
		decodeStrict(t, resp, &m)
		if m.Namespace != r.ex.Path["namespace"] || m.ID != r.ex.Path["id"] || m.Text == "" || m.Time.IsZero() {
			bad("not the memory asked for")
		}
	case "ListMemoriesResponse":
		var page api.ListMemoriesResponse
		decodeStrict(t, resp, &page)
		limit := retrieval.DefaultListLimit
		if v, ok := r.ex.Query["limit"]; ok {
			limit, _ = strconv.Atoi(v)
		}
		prev := r.ex.Query["after"]
		for _, m := range page.Memories {
			if m.Namespace != r.ex.Path["namespace"] || m.ID <= prev || m.Text == "" {
				bad("memory %s/%s out of place", m.Namespace, m.ID)
			}
			prev = m.ID
		}
		switch {
		case page.Memories == nil:
			bad("memories is null, want a list")
		case len(page.Memories) > limit:
			bad("%d memories, limit %d", len(page.Memories), limit)
		case page.Next != "" && (len(page.Memories) != limit || page.Next != prev):
			bad("next %q after a page of %d ending at %q", page.Next, len(page.Memories), prev)
		}
	case "SearchResponse":
		var req api.SearchRequest
		var sr api.SearchResponse
		_ = json.Unmarshal(r.ex.Value, &req)
		decodeStrict(t, resp, &sr)
		checkSearch(bad, &req, &sr)
	case "DeleteResponse":
		var d api.DeleteResponse
		decodeStrict(t, resp, &d)
		if !d.Deleted {
			bad("deleted is false")
		}
	case "UpdateMemoryResponse":
		var u api.UpdateMemoryResponse
		decodeStrict(t, resp, &u)
		var req api.UpdateMemoryRequest
		_ = json.Unmarshal(r.ex.Value, &req)
		if (req.Text != nil && u.Text != *req.Text) || u.ID != r.ex.Path["id"] || u.Vector == "" {
			bad("update answered %+v", u)
		}
		for k, v := range req.Metadata {
			if got, ok := u.Metadata[k]; (v == nil && ok) || (v != nil && got != v) {
				bad("metadata %q is %v, sent %v", k, got, v)
			}
		}
	case "ForgetResponse":
		var f api.ForgetResponse
		decodeStrict(t, resp, &f)
		if f.Namespace != r.ex.Path["namespace"] || f.Deleted < 0 {
			bad("forget answered %+v", f)
		}
	case "NamespacesResponse":
		var n api.NamespacesResponse
		decodeStrict(t, resp, &n)
		if len(n.Namespaces) == 0 || !slices.IsSortedFunc(n.Namespaces, func(a, b api.NamespaceInfo) int { return strings.Compare(a.Namespace, b.Namespace) }) {
			bad("namespaces %+v: none, or not sorted", n.Namespaces)
		}
		for _, x := range n.Namespaces {
			if x.Memories < 1 {
				bad("namespace %q with %d memories", x.Namespace, x.Memories)
			}
		}
	default:
		bad("no check for response schema %q", schema)
	}
}

// checkSearch checks a search answer against its request, given the
// examples' server (fakeBackend, so reranking is on by default).
func checkSearch(bad func(string, ...any), req *api.SearchRequest, sr *api.SearchResponse) {
	topK := retrieval.DefaultTopK
	if req.TopK != nil {
		topK = *req.TopK
	}
	reranked := req.Rerank == nil || *req.Rerank
	hasVec := slices.ContainsFunc(req.Vector, func(x float32) bool { return x != 0 })
	c := sr.Counts
	switch {
	case sr.ID == "" || sr.Results == nil:
		bad("no id or null results")
	case !slices.Contains([]string{"hybrid", "bm25", "scan", "dense"}, sr.Level):
		bad("unknown level %q", sr.Level)
	case req.Mode != "" && sr.Level != req.Mode:
		bad("mode %q answered at level %q", req.Mode, sr.Level)
	case req.Mode == "" && hasVec && sr.Level != "hybrid":
		bad("a query vector, but level %q", sr.Level)
	case (sr.Vectors == "used") != (sr.Level == "hybrid" || sr.Level == "dense"):
		bad("level %q with vectors %q", sr.Level, sr.Vectors)
	case sr.Degraded != "" && sr.Vectors != "building":
		bad("degraded %q though nothing was building (vectors %q)", sr.Degraded, sr.Vectors)
	case sr.Reranked != reranked || (sr.Backend == "fake") != reranked:
		bad("reranked %v backend %q, want reranked %v", sr.Reranked, sr.Backend, reranked)
	case len(sr.Results) > topK || c.Returned != len(sr.Results) || c.Returned > c.AboveThreshold ||
		c.AboveThreshold > c.Retrieved || (reranked && c.AboveThreshold > c.Reranked):
		bad("counts %+v for %d results (top_k %d)", c, len(sr.Results), topK)
	case len(sr.Results) == 0 && sr.Vectors != "none stored":
		bad("an example search should find something")
	}
	for i, res := range sr.Results {
		stage := "fused"
		if reranked {
			stage = "rerank"
		}
		want := []string{stage}
		if req.Recency != nil {
			want = append(want, "recency")
		}
		if req.MMR != nil {
			want = append(want, "mmr")
		}
		if req.Prefer != nil {
			want = append(want, "prefer")
		}
		for _, k := range want {
			if _, ok := res.Scores[k]; !ok {
				bad("result %d has no %q score", i, k)
			}
		}
		switch {
		case res.Namespace != req.Namespace || res.ID == "" || res.Text == "" || res.Time.IsZero():
			bad("result %d is not a memory of %s", i, req.Namespace)
		case req.Threshold != nil && res.Scores[stage] < *req.Threshold:
			bad("result %d: %s score %v under the threshold %v", i, stage, res.Scores[stage], *req.Threshold)
		case req.Prefer != nil && req.Prefer.Weight != nil && math.Abs(res.Score-(res.Scores[stage]*(1-*req.Prefer.Weight)+*req.Prefer.Weight*res.Scores["prefer"])) > 1e-9:
			bad("result %d: score %v is not the prefer blend of %v", i, res.Score, res.Scores[stage])
		case req.Recency == nil && req.Prefer == nil && res.Score != res.Scores[stage]:
			bad("result %d: score %v is not its %s score", i, res.Score, stage)
		case req.MMR == nil && i > 0 && res.Score > sr.Results[i-1].Score:
			bad("result %d scores above the one before it", i)
		}
	}
}

// TestOpenAPIRoutes: every route the server registers is documented, and
// every documented operation is a registered route, with its path
// parameters declared.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	srv, err := New(DefaultConfig(), &fakeBackend{}, Limits{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	fiberParam := regexp.MustCompile(`:[^/]+`)
	routes := map[string]bool{}
	for _, r := range srv.app.GetRoutes(true) {
		if r.Method == http.MethodHead { // fiber adds HEAD to every GET
			continue
		}
		routes[r.Method+" "+fiberParam.ReplaceAllString(r.Path, "{}")] = true
	}
	documented := map[string]bool{}
	for _, o := range doc.ops {
		documented[strings.ToUpper(o.method)+" "+placeholder.ReplaceAllString(o.path, "{}")] = true
		var inPath []string
		for _, m := range placeholder.FindAllStringSubmatch(o.path, -1) {
			inPath = append(inPath, m[1])
		}
		var declared []string
		for _, p := range o.op.Parameters {
			if p = doc.param(p); p.In == "path" {
				declared = append(declared, p.Name)
			}
		}
		slices.Sort(inPath)
		slices.Sort(declared)
		if !slices.Equal(inPath, declared) {
			t.Errorf("%s %s: path parameters %v, declared %v", o.method, o.path, inPath, declared)
		}
	}
	for r := range routes {
		if !documented[r] {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for d := range documented {
		if !routes[d] {
			t.Errorf("openapi.json documents %s, which the server does not route", d)
		}
	}
	if len(routes) < 10 {
		t.Errorf("only %d routes found", len(routes))
	}
}

// TestOpenAPIErrors: the Error schema lists exactly the error kinds, and
// every documented error status is the status of some kind.
func TestOpenAPIErrors(t *testing.T) {
	doc := loadOpenAPI(t)
	var kinds, statuses []string
	for k, s := range statusOf {
		kinds = append(kinds, string(k))
		statuses = append(statuses, strconv.Itoa(s))
	}
	enum := slices.Clone(doc.schemas["Error"].Properties["error_type"].Enum)
	slices.Sort(kinds)
	slices.Sort(enum)
	if !slices.Equal(kinds, enum) {
		t.Errorf("Error.error_type enum %v, kinds %v", enum, kinds)
	}
	for _, o := range doc.ops {
		for code, resp := range o.op.Responses {
			if code >= "400" && !slices.Contains(statuses, code) {
				t.Errorf("%s %s: %s is no error kind's status", o.method, o.path, code)
			}
			want := "#/components/schemas/Error"
			if slices.Contains(openAIRoutes, o.path) {
				want = "#/components/schemas/OpenAIError"
			}
			if s := resp.Content["application/json"].Schema; code >= "400" && s.Ref != want {
				t.Errorf("%s %s: %s is not %s", o.method, o.path, code, want)
			}
		}
	}
}

// TestOpenAPISchemasMirrorAPI: the memory API's schemas have exactly the
// JSON fields of the api types, with matching JSON types; for responses,
// "required" lists exactly the fields that are never omitted.
func TestOpenAPISchemasMirrorAPI(t *testing.T) {
	doc := loadOpenAPI(t)
	mirror := []struct {
		name     string
		typ      reflect.Type
		response bool
	}{
		{"MemoryIn", reflect.TypeFor[api.MemoryIn](), false},
		{"AddMemoriesRequest", reflect.TypeFor[api.AddMemoriesRequest](), false},
		{"AddedMemory", reflect.TypeFor[api.AddedMemory](), true},
		{"AddMemoriesResponse", reflect.TypeFor[api.AddMemoriesResponse](), true},
		{"Memory", reflect.TypeFor[api.Memory](), true},
		{"ListMemoriesResponse", reflect.TypeFor[api.ListMemoriesResponse](), true},
		{"SearchRequest", reflect.TypeFor[api.SearchRequest](), false},
		{"FusionParams", reflect.TypeFor[api.FusionParams](), false},
		{"RecencyParams", reflect.TypeFor[api.RecencyParams](), false},
		{"MMRParams", reflect.TypeFor[api.MMRParams](), false},
		{"RankingParams", reflect.TypeFor[api.RankingParams](), false},
		{"ExpansionParams", reflect.TypeFor[api.ExpansionParams](), false},
		{"ContextParams", reflect.TypeFor[api.ContextParams](), false},
		{"FieldsParams", reflect.TypeFor[api.FieldsParams](), false},
		{"SearchResponse", reflect.TypeFor[api.SearchResponse](), true},
		{"SearchResult", reflect.TypeFor[api.SearchResult](), true},
		{"SearchCounts", reflect.TypeFor[api.SearchCounts](), true},
		{"SearchTiming", reflect.TypeFor[api.SearchTiming](), true},
		{"DeleteResponse", reflect.TypeFor[api.DeleteResponse](), true},
		{"Filter", reflect.TypeFor[api.Filter](), false},
		{"PreferParams", reflect.TypeFor[api.PreferParams](), false},
		{"Condition", reflect.TypeFor[api.Condition](), false},
		{"MatchCondition", reflect.TypeFor[api.MatchCondition](), false},
		{"RangeCondition", reflect.TypeFor[api.RangeCondition](), false},
		{"IsEmptyCondition", reflect.TypeFor[api.IsEmptyCondition](), false},
		{"UpdateMemoryRequest", reflect.TypeFor[api.UpdateMemoryRequest](), false},
		{"UpdateMemoryResponse", reflect.TypeFor[api.UpdateMemoryResponse](), true},
		{"ForgetResponse", reflect.TypeFor[api.ForgetResponse](), true},
		{"NamespacesResponse", reflect.TypeFor[api.NamespacesResponse](), true},
		{"NamespaceInfo", reflect.TypeFor[api.NamespaceInfo](), true},
		{"Error", reflect.TypeFor[api.Error](), true},
		{"MemoryInfo", reflect.TypeFor[api.MemoryInfo](), true},
		{"EmbeddingsResponse", reflect.TypeFor[api.EmbeddingsResponse](), true},
		{"ModelList", reflect.TypeFor[api.ModelList](), true},
		{"ModelCard", reflect.TypeFor[api.ModelCard](), false},
		{"TokenizeResponse", reflect.TypeFor[api.TokenizeResponse](), true},
		{"Token", reflect.TypeFor[api.Token](), true},
		{"EmbedderInfo", reflect.TypeFor[api.EmbedderInfo](), true},
	}
	for _, m := range mirror {
		s, ok := doc.schemas[m.name]
		if !ok {
			t.Errorf("schema %s is missing", m.name)
			continue
		}
		fields := map[string]reflect.StructField{}
		jsonFields(m.typ, fields)
		var always []string
		for name, f := range fields {
			if !strings.Contains(f.Tag.Get("json"), ",omitempty") {
				always = append(always, name)
			}
			p, ok := s.Properties[name]
			if !ok {
				t.Errorf("%s lacks property %q", m.name, name)
				continue
			}
			if ref, ok := strings.CutPrefix(p.Ref, "#/components/schemas/"); ok {
				p = doc.schemas[ref]
			}
			if f.Type.Kind() == reflect.Interface {
				continue // a filter value: string, number or boolean (oneOf)
			}
			if want := jsonType(f.Type); p.Type != want {
				t.Errorf("%s.%s has type %q, the Go field %q", m.name, name, p.Type, want)
			}
		}
		for name := range s.Properties {
			if _, ok := fields[name]; !ok {
				t.Errorf("%s documents %q, which %v lacks", m.name, name, m.typ)
			}
		}
		for _, r := range s.Required {
			if _, ok := fields[r]; !ok {
				t.Errorf("%s requires %q, which %v lacks", m.name, r, m.typ)
			}
		}
		req := slices.Sorted(slices.Values(s.Required))
		slices.Sort(always)
		if m.response && !slices.Equal(req, always) {
			t.Errorf("%s requires %v; always present: %v", m.name, req, always)
		}
	}
}

// jsonFields collects the JSON fields of struct type t, flattening
// embedded structs as encoding/json does.
func jsonFields(t reflect.Type, out map[string]reflect.StructField) {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "":
			jsonFields(f.Type, out)
		default:
			out[cmp.Or(name, f.Name)] = f
		}
	}
}

// jsonType is the JSON Schema type of a Go type as encoding/json writes it.
func jsonType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "string"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return "array"
	}
	return "object"
}

// TestOpenAPIOperationIDs: every operation has an operationId, unique in
// the document, which client generators name their methods after.
func TestOpenAPIOperationIDs(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			if !strings.Contains("get post put patch delete", method) {
				continue
			}
			var op struct {
				ID string `json:"operationId"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			where := method + " " + path
			switch {
			case op.ID == "":
				t.Errorf("%s has no operationId", where)
			case seen[op.ID] != "":
				t.Errorf("operationId %q on %s and %s", op.ID, seen[op.ID], where)
			}
			seen[op.ID] = where
		}
	}
	if len(seen) < 10 {
		t.Fatalf("only %d operations found", len(seen))
	}
}

// checkEmbedExample checks a 2xx answer of the embedding routes against
// its request; false for other routes.
func checkEmbedExample(t *testing.T, where string, r exampleRun, resp response) bool {
	t.Helper()
	switch r.path {
	case "/v1/embeddings":
		var req api.EmbeddingsRequest
		var out api.EmbeddingsResponse
		_ = json.Unmarshal(r.ex.Value, &req)
		decodeStrict(t, resp, &out)
		dim := 8
		if req.Dimensions != nil {
			dim = *req.Dimensions
		}
		if out.Object != "list" || out.Model != "fake-embed" || len(out.Data) != len(req.Input.Texts) || out.Usage.TotalTokens < len(req.Input.Texts) {
			t.Errorf("%s: %s", where, resp.body)
		}
		for i, d := range out.Data {
			if d.Index != i || len(d.Embedding.Values) != dim || d.Embedding.Base64 != (req.EncodingFormat == "base64") {
				t.Errorf("%s: element %d: %+v", where, i, d)
			}
		}
	case "/embed":
		var req api.TEIEmbedRequest
		var out [][]float32
		_ = json.Unmarshal(r.ex.Value, &req)
		decodeStrict(t, resp, &out)
		if len(out) != len(req.Inputs.Texts) {
			t.Errorf("%s: %d vectors for %d inputs", where, len(out), len(req.Inputs.Texts))
		}
	case "/tokenize":
		var req api.TokenizeRequest
		_ = json.Unmarshal(r.ex.Value, &req)
		if req.Prompt != nil {
			var out api.TokenizeResponse
			decodeStrict(t, resp, &out)
			if out.Count != len(out.Tokens) || out.Count == 0 {
				t.Errorf("%s: %s", where, resp.body)
			}
			return true
		}
		var out [][]api.Token
		decodeStrict(t, resp, &out)
		if len(out) != len(req.Inputs.Texts) {
			t.Errorf("%s: %d token lists for %d inputs", where, len(out), len(req.Inputs.Texts))
		}
	default:
		return false
	}
	return true
}
