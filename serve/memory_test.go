package serve

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
	"github.com/rerankd/rerankd/scoring"
)

// withScorer hands b down to the memory service as the composition root
// does (cmd/internal/app): the service reranks with the server's scorer.
func withScorer(rcfg retrieval.Config, cfg Config, b scoring.Backend) retrieval.Config {
	rcfg.Rerank = scoring.Reranking(b, cfg.MaxDocuments, cfg.MaxTokensPerDoc)
	return rcfg
}

// startMemory runs a server with the memory API over a fresh store.
func startMemory(t *testing.T, cfg Config, b scoring.Backend, rcfg retrieval.Config) string {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "m.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := retrieval.New(st, nil, withScorer(rcfg, cfg, b))
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	if err := e.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(); _ = st.Close() })
	return start(t, cfg, b, func(s *Server) { s.WithMemory(e) })
}

func TestMemoryAPIRoundTrip(t *testing.T) {
	url := startMemory(t, DefaultConfig(), &fakeBackend{}, retrieval.DefaultConfig())
	r := postJSON(t, url+"/v1/memories", `{"namespace":"alice","memories":[
		{"id":"m1","text":"Alice moved to Paris in May","time":"2025-05-01T00:00:00Z","metadata":{"kind":"fact"}},
		{"id":"m2","text":"Alice likes green tea"},
		{"text":"Alice's cat is called Miso","source":"/chat/42"}]}`)
	if r.code != http.StatusCreated {
		t.Fatalf("add: %d %s", r.code, r.body)
	}
	var added api.AddMemoriesResponse
	decodeInto(t, r, &added)
	if len(added.Added) != 3 || added.Added[2].ID == "" || added.Added[0].Vector != "none" {
		t.Fatalf("added %+v", added)
	}
	// Single memory at the top level, another namespace.
	if r := postJSON(t, url+"/v1/memories", `{"namespace":"bob","id":"b1","text":"Bob moved to Paris too"}`); r.code != http.StatusCreated {
		t.Fatalf("single add: %d %s", r.code, r.body)
	}

	r = do(t, http.MethodGet, url+"/v1/memories/alice/m1", "", "")
	var m api.Memory
	decodeInto(t, r, &m)
	if r.code != 200 || m.Text != "Alice moved to Paris in May" || m.Metadata["kind"] != "fact" || m.Time.Year() != 2025 {
		t.Fatalf("get: %d %+v", r.code, m)
	}

	r = do(t, http.MethodGet, url+"/v1/memories/alice?limit=2", "", "")
	var page api.ListMemoriesResponse
	decodeInto(t, r, &page)
	if r.code != 200 || len(page.Memories) != 2 || page.Next == "" {
		t.Fatalf("list page 1: %d %s", r.code, r.body)
	}
	r = do(t, http.MethodGet, url+"/v1/memories/alice?limit=2&after="+page.Next, "", "")
	var page2 api.ListMemoriesResponse
	decodeInto(t, r, &page2)
	if len(page2.Memories) != 1 || page2.Next != "" {
		t.Fatalf("list page 2: %s", r.body)
	}

	r = postJSON(t, url+"/v1/search", `{"namespace":"alice","query":"where did Alice move","top_k":2}`)
	var sr api.SearchResponse
	decodeInto(t, r, &sr)
	if r.code != 200 || sr.Level != "bm25" || !sr.Reranked || sr.Backend != "fake" || len(sr.Results) == 0 {
		t.Fatalf("search: %d %s", r.code, r.body)
	}
	top := sr.Results[0]
	if top.ID != "m1" || top.Namespace != "alice" {
		t.Fatalf("top result %+v", top)
	}
	for _, k := range []string{"bm25", "fused", "rerank"} {
		if _, ok := top.Scores[k]; !ok {
			t.Fatalf("top result lacks the %q stage score: %v", k, top.Scores)
		}
	}
	for _, res := range sr.Results {
		if res.Namespace != "alice" {
			t.Fatalf("search in alice returned %+v", res)
		}
	}

	if r := do(t, http.MethodDelete, url+"/v1/memories/alice/m1", "", ""); r.code != 200 {
		t.Fatalf("delete: %d %s", r.code, r.body)
	}
	for _, u := range []string{"/v1/memories/alice/m1"} {
		if r := do(t, http.MethodGet, url+u, "", ""); r.code != 404 || !strings.Contains(string(r.body), `"error_type":"not_found"`) {
			t.Fatalf("get deleted: %d %s", r.code, r.body)
		}
		if r := do(t, http.MethodDelete, url+u, "", ""); r.code != 404 {
			t.Fatalf("delete twice: %d %s", r.code, r.body)
		}
	}
}

func TestSearchStages(t *testing.T) {
	url := startMemory(t, DefaultConfig(), &fakeBackend{}, retrieval.DefaultConfig())
	body := `{"namespace":"u","memories":[
		{"id":"old","text":"coffee order oat latte","time":"2025-01-01T00:00:00Z"},
		{"id":"new","text":"coffee order flat white","time":"2025-03-01T00:00:00Z"},
		{"id":"other","text":"budget meeting at noon","time":"2025-03-01T00:00:00Z"}]}`
	if r := postJSON(t, url+"/v1/memories", body); r.code != 201 {
		t.Fatalf("add: %d %s", r.code, r.body)
	}
	r := postJSON(t, url+"/v1/search", `{"namespace":"u","query":"coffee order","rerank":false,
		"recency":{"weight":0.5,"half_life":"168h","now":"2025-03-01T00:00:00Z"},"mmr":{"lambda":0.7}}`)
	var sr api.SearchResponse
	decodeInto(t, r, &sr)
	if r.code != 200 || sr.Reranked || len(sr.Results) != 2 {
		t.Fatalf("search: %d %s", r.code, r.body)
	}
	if sr.Results[0].ID != "new" {
		t.Fatalf("recency should put the new memory first: %s", r.body)
	}
	for _, k := range []string{"recency", "mmr"} {
		if _, ok := sr.Results[0].Scores[k]; !ok {
			t.Fatalf("no %q score: %v", k, sr.Results[0].Scores)
		}
	}
	// Threshold on the rerank probability: the fake gives (1+m)/(2+n).
	r = postJSON(t, url+"/v1/search", `{"namespace":"u","query":"coffee order","threshold":0.99}`)
	decodeInto(t, r, &sr)
	if r.code != 200 || len(sr.Results) != 0 || sr.Counts.Retrieved != 2 {
		t.Fatalf("threshold 0.99: %d %s", r.code, r.body)
	}
}

func TestMemoryAPIErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"secret-key-1"}
	url := startMemory(t, cfg, &fakeBackend{}, retrieval.DefaultConfig())
	auth := []string{"Authorization", "Bearer secret-key-1"}
	long := strings.Repeat("x", 200)
	cases := []struct {
		name, method, path, ctype, body string
		noAuth                          bool
		code                            int
		kind                            string
	}{
		{"no key", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q"}`, true, 401, "unauthorized"},
		{"no key get", "GET", "/v1/memories/a/b", "", "", true, 401, "unauthorized"},
		{"malformed JSON", "POST", "/v1/memories", "application/json", `{"text":`, false, 400, "invalid_request"},
		{"wrong content type", "POST", "/v1/memories", "text/plain", `{"text":"x"}`, false, 415, "unsupported_media_type"},
		{"wrong type", "POST", "/v1/memories", "application/json", `{"namespace":"a","text":5}`, false, 422, "validation"},
		{"no namespace", "POST", "/v1/memories", "application/json", `{"text":"x"}`, false, 422, "validation"},
		{"namespace with separator", "POST", "/v1/memories", "application/json", `{"namespace":"a/b","text":"x"}`, false, 422, "validation"},
		{"empty text", "POST", "/v1/memories", "application/json", `{"namespace":"a","text":""}`, false, 422, "validation"},
		{"empty batch", "POST", "/v1/memories", "application/json", `{"namespace":"a","memories":[]}`, false, 422, "validation"},
		{"single and batch", "POST", "/v1/memories", "application/json", `{"namespace":"a","text":"x","memories":[{"text":"y"}]}`, false, 422, "validation"},
		{"vector without index", "POST", "/v1/memories", "application/json", `{"namespace":"a","text":"x","vector":[1,2]}`, false, 422, "validation"},
		{"long id", "POST", "/v1/memories", "application/json", `{"namespace":"a","id":"` + long + `","text":"x"}`, false, 422, "validation"},
		{"bad list limit", "GET", "/v1/memories/a?limit=0", "", "", false, 422, "validation"},
		{"huge list limit", "GET", "/v1/memories/a?limit=99999999999999999999", "", "", false, 422, "validation"},
		{"path traversal id", "GET", "/v1/memories/a/..%2F..%2Fetc", "", "", false, 422, "validation"},
		{"missing memory", "GET", "/v1/memories/a/nope", "", "", false, 404, "not_found"},
		{"blank query", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"  "}`, false, 400, "invalid_request"},
		{"bad top_k", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","top_k":-1}`, false, 422, "validation"},
		{"bad threshold", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","threshold":2}`, false, 422, "validation"},
		{"bad half-life", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","recency":{"half_life":"soon"}}`, false, 422, "validation"},
		{"bad fusion", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","fusion":{"method":"max"}}`, false, 422, "validation"},
		{"bad mmr", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","mmr":{"lambda":-1}}`, false, 422, "validation"},
		{"unknown ranking", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","ranking":{"name":"neural"}}`, false, 422, "validation"},
		{"bad ranking", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","ranking":{"k1":-1,"context":{"window":99}}}`, false, 422, "validation"},
		{"unknown mode", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","mode":"psychic"}`, false, 422, "validation"},
		{"dense without vectors", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"still","mode":"dense"}`, false, 422, "validation"},
		{"query vector without index", "POST", "/v1/search", "application/json", `{"namespace":"a","query":"q","vector":[1]}`, false, 422, "validation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if !tc.noAuth {
				h = auth
			}
			r := do(t, tc.method, url+tc.path, tc.ctype, tc.body, h...)
			if r.code != tc.code || !strings.Contains(string(r.body), fmt.Sprintf(`"error_type":%q`, tc.kind)) {
				t.Fatalf("got %d %s, want %d %s", r.code, r.body, tc.code, tc.kind)
			}
		})
	}
	// The server still answers correctly afterwards.
	if r := postJSON(t, url+"/v1/memories", `{"namespace":"a","text":"still alive"}`, auth...); r.code != 201 {
		t.Fatalf("after the bad inputs: %d %s", r.code, r.body)
	}
}

func TestMemoryAPIDisabled(t *testing.T) {
	url := start(t, DefaultConfig(), &fakeBackend{})
	r := postJSON(t, url+"/v1/search", `{"namespace":"a","query":"q"}`)
	if r.code != 404 || !strings.Contains(string(r.body), "memory API disabled") {
		t.Fatalf("got %d %s", r.code, r.body)
	}
}

func TestKeyScopes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"alice-key-123", "team-key-456", "admin-key-789"}
	cfg.KeyScopes = map[string][]string{"alice-key-123": {"alice"}, "team-key-456": {"team-*", "shared"}}
	url := startMemory(t, cfg, &fakeBackend{}, retrieval.DefaultConfig())
	as := func(key string) []string { return []string{"Authorization", "Bearer " + key} }
	cases := []struct {
		name, key, method, path, body string
		code                          int
	}{
		{"alice writes her own", "alice-key-123", "POST", "/v1/memories", `{"namespace":"alice","id":"a1","text":"alice secret"}`, 201},
		{"alice writes bob's", "alice-key-123", "POST", "/v1/memories", `{"namespace":"bob","text":"x"}`, 403},
		{"alice smuggles bob's in a batch", "alice-key-123", "POST", "/v1/memories", `{"namespace":"alice","memories":[{"text":"ok"},{"namespace":"bob","text":"x"}]}`, 403},
		{"team writes a team namespace", "team-key-456", "POST", "/v1/memories", `{"namespace":"team-red","id":"t1","text":"team plan"}`, 201},
		{"team writes shared", "team-key-456", "POST", "/v1/memories", `{"namespace":"shared","text":"hello"}`, 201},
		{"team reads alice", "team-key-456", "GET", "/v1/memories/alice/a1", "", 403},
		{"team lists alice", "team-key-456", "GET", "/v1/memories/alice", "", 403},
		{"team deletes alice", "team-key-456", "DELETE", "/v1/memories/alice/a1", "", 403},
		{"team searches alice", "team-key-456", "POST", "/v1/search", `{"namespace":"alice","query":"secret"}`, 403},
		{"prefix is not a substring", "team-key-456", "POST", "/v1/search", `{"namespace":"my-team-x","query":"plan"}`, 403},
		{"team updates alice", "team-key-456", "PATCH", "/v1/memories/alice/a1", `{"text":"x"}`, 403},
		{"team forgets alice", "team-key-456", "DELETE", "/v1/memories/alice", "", 403},
		{"team forgets a team namespace never written", "team-key-456", "DELETE", "/v1/memories/team-blue", "", 200},
		{"alice updates her own", "alice-key-123", "PATCH", "/v1/memories/alice/a1", `{"metadata":{"k":1}}`, 200},
		{"alice reads her own", "alice-key-123", "GET", "/v1/memories/alice/a1", "", 200},
		{"admin reads anything", "admin-key-789", "GET", "/v1/memories/team-red/t1", "", 200},
		{"alice still reranks", "alice-key-123", "POST", "/rerank", `{"query":"q","documents":["a"]}`, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct := ""
			if tc.body != "" {
				ct = "application/json"
			}
			r := do(t, tc.method, url+tc.path, ct, tc.body, as(tc.key)...)
			if r.code != tc.code {
				t.Fatalf("got %d %s, want %d", r.code, r.body, tc.code)
			}
			if tc.code == 403 && !strings.Contains(string(r.body), `"error_type":"forbidden"`) {
				t.Fatalf("403 body %s", r.body)
			}
		})
	}
	// The rejected batch wrote nothing, not even its in-scope item.
	r := do(t, "GET", url+"/v1/memories/alice", "", "", as("admin-key-789")...)
	var page api.ListMemoriesResponse
	decodeInto(t, r, &page)
	if len(page.Memories) != 1 {
		t.Fatalf("alice has %d memories, want 1: %s", len(page.Memories), r.body)
	}
}

func TestKeyScopesValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"alice-key-123"}
	cfg.KeyScopes = map[string][]string{"stranger-key-1": {"x"}, "alice-key-123": {"bad/ns"}}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "not among the API keys") || !strings.Contains(err.Error(), "bad/ns") {
		t.Fatalf("Validate = %v", err)
	}
	if strings.Contains(err.Error(), "stranger-key-1") {
		t.Fatal("a key leaked into an error message")
	}
}

// TestSearchRanking: the served context stage finds the reply that
// shares no word with the query, right after the turn that does
// (lexical scores 1.5 and 1.0 by retrieval's worked example); plain
// bm25, selected by name, finds only the turn; every invalid ranking
// field is reported at once.
func TestSearchRanking(t *testing.T) {
	url := startMemory(t, DefaultConfig(), &fakeBackend{}, retrieval.DefaultConfig())
	body := `{"namespace":"u","memories":[
		{"id":"t1","text":"Caroline: did the pottery class go well?","source":"chat-1","time":"2025-01-01T00:00:00Z"},
		{"id":"t2","text":"Melanie: Yes, it was amazing!","source":"chat-1","time":"2025-01-01T00:01:00Z"},
		{"id":"t3","text":"Melanie: my kids went camping","source":"chat-2","time":"2025-01-01T00:00:00Z"}]}`
	if r := postJSON(t, url+"/v1/memories", body); r.code != 201 {
		t.Fatalf("add: %d %s", r.code, r.body)
	}
	cases := []struct {
		name, ranking string
		want          []string
	}{
		{"default", ``, []string{"t1", "t2"}},
		{"bm25 by name", `,"ranking":{"name":"bm25"}`, []string{"t1"}},
		{"context off", `,"ranking":{"context":{"neighbour":0,"source":0}}`, []string{"t1"}},
	}
	for _, tc := range cases {
		r := postJSON(t, url+"/v1/search", `{"namespace":"u","query":"pottery class","rerank":false`+tc.ranking+`}`)
		var sr api.SearchResponse
		decodeInto(t, r, &sr)
		var got []string
		for _, res := range sr.Results {
			got = append(got, res.ID)
		}
		if r.code != 200 || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %d %v, want %v (%s)", tc.name, r.code, got, tc.want, r.body)
		}
	}
	// k1 follows lexical.CheckK1, the rule of the index and of the scan
	// level: [0, 1000] accepted, beyond it a 422 naming it.
	if r := postJSON(t, url+"/v1/search", `{"namespace":"u","query":"pottery","rerank":false,"ranking":{"k1":1000}}`); r.code != 200 {
		t.Errorf("k1 1000: %d %s, want 200", r.code, r.body)
	}
	if r := postJSON(t, url+"/v1/search", `{"namespace":"u","query":"pottery","ranking":{"k1":5000}}`); r.code != 422 || !strings.Contains(string(r.body), "k1 5000") {
		t.Errorf("k1 5000: %d %s, want 422 naming k1 5000", r.code, r.body)
	}
	r := postJSON(t, url+"/v1/search", `{"namespace":"u","query":"q","ranking":{"k1":-1,"b":3,"expansion":{"docs":0},"context":{"window":99}}}`)
	for _, want := range []string{"k1", "b 3", "expansion.docs", "context.window"} {
		if r.code != 422 || !strings.Contains(string(r.body), want) {
			t.Errorf("bad ranking: %d %s, want 422 naming %s", r.code, r.body, want)
		}
	}
}

// TestSearchFields: field-aware matching served. The memories of
// retrieval's TestSearchFields: a is Caroline's, b is said to her, c is
// Melanie's of July. Plain bm25 ranks b (it names Caroline) before a;
// the speaker field puts what Caroline said first; an empty fields
// object turns on the defaults; a date query finds nothing in the texts
// and, with the time field, the day's memories before the year's.
func TestSearchFields(t *testing.T) {
	url := startMemory(t, DefaultConfig(), &fakeBackend{}, retrieval.DefaultConfig())
	body := `{"namespace":"f","memories":[
		{"id":"a","text":"I love pottery","metadata":{"speaker":"Caroline"},"time":"2023-05-08T10:00:00Z"},
		{"id":"b","text":"Caroline, your pottery is lovely","metadata":{"speaker":"Melanie"},"time":"2023-05-08T10:01:00Z"},
		{"id":"c","text":"I painted a lake at sunrise","metadata":{"speaker":"Melanie"},"time":"2023-07-14T10:00:00Z"}]}`
	if r := postJSON(t, url+"/v1/memories", body); r.code != 201 {
		t.Fatalf("add: %d %s", r.code, r.body)
	}
	cases := []struct {
		name, query, ranking string
		want                 []string
	}{
		{"bm25", "Caroline pottery", `{"name":"bm25"}`, []string{"b", "a"}},
		{"speaker", "Caroline pottery", `{"name":"bm25","fields":{"speaker":2}}`, []string{"a", "b"}},
		{"defaults", "Caroline pottery", `{"name":"bm25","fields":{}}`, []string{"a", "b"}},
		{"date, bm25", "What happened on 8 May 2023?", `{"name":"bm25"}`, nil},
		{"date, time", "What happened on 8 May 2023?", `{"name":"bm25","fields":{"time":1}}`, []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		r := postJSON(t, url+"/v1/search", `{"namespace":"f","query":"`+tc.query+`","rerank":false,"ranking":`+tc.ranking+`}`)
		var sr api.SearchResponse
		decodeInto(t, r, &sr)
		var got []string
		for _, res := range sr.Results {
			got = append(got, res.ID)
		}
		if r.code != 200 || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %d %v, want %v (%s)", tc.name, r.code, got, tc.want, r.body)
		}
	}
	r := postJSON(t, url+"/v1/search", `{"namespace":"f","query":"q","ranking":{"b":3,"fields":{"speaker":11,"time":-1,"speaker_b":2,"time_b":-0.5}}}`)
	for _, want := range []string{"b 3", "fields.speaker 11", "fields.time -1", "fields.speaker_b 2", "fields.time_b -0.5"} {
		if r.code != 422 || !strings.Contains(string(r.body), want) {
			t.Errorf("bad fields: %d %s, want 422 naming %s", r.code, r.body, want)
		}
	}
}

// TestTinyVectorNotAcknowledgedIndexed: with --vector-dim 4 a vector of
// norm 1e-31 (no direction for the index) is answered zero_refused, not
// "indexed", and the namespace's usable vectors still give hybrid answers.
func TestTinyVectorNotAcknowledgedIndexed(t *testing.T) {
	rcfg := retrieval.DefaultConfig()
	rcfg.Dim = 4
	url := startMemory(t, DefaultConfig(), &fakeBackend{}, rcfg)
	r := postJSON(t, url+"/v1/memories", `{"namespace":"v","memories":[
		{"id":"tiny","text":"apple tiny","vector":[1e-31,0,0,0]},
		{"id":"ok","text":"apple ok","vector":[0,1,0,0]}]}`)
	var added api.AddMemoriesResponse
	decodeInto(t, r, &added)
	if r.code != http.StatusCreated || len(added.Added) != 2 || added.Added[0].Vector != "zero_refused" || added.Added[1].Vector != "indexed" {
		t.Fatalf("add: %d %s, want tiny zero_refused, ok indexed", r.code, r.body)
	}
	r = postJSON(t, url+"/v1/search", `{"namespace":"v","query":"apple","vector":[0,2,0,0],"rerank":false}`)
	var sr api.SearchResponse
	decodeInto(t, r, &sr)
	if r.code != 200 || sr.Level != "hybrid" || len(sr.Results) == 0 || sr.Results[0].ID != "ok" {
		t.Fatalf("hybrid search: %d %s", r.code, r.body)
	}
	r = postJSON(t, url+"/v1/search", `{"namespace":"v","query":"apple","vector":[1e-31,0,0,0],"rerank":false}`)
	decodeInto(t, r, &sr)
	if r.code != 200 || sr.Level != "bm25" {
		t.Fatalf("tiny query vector: %d %s, want 200 at bm25", r.code, r.body)
	}
}

// TestInfoMemory: /info describes an embedded store (not shared, its
// vector dimension; no follower fields) and has no memory section without
// the memory API.
func TestInfoMemory(t *testing.T) {
	rcfg := retrieval.DefaultConfig()
	rcfg.Dim = 8
	url := startMemory(t, DefaultConfig(), &fakeBackend{}, rcfg)
	var info api.Info
	decodeInto(t, do(t, http.MethodGet, url+"/info", "", ""), &info)
	if info.Memory == nil || info.Memory.Shared || info.Memory.VectorDim != 8 || info.Memory.CatchUpS != 0 || info.Memory.ResidentNamespaces != 0 {
		t.Fatalf("embedded store: %+v", info.Memory)
	}
	// The memory service's totals are in /metrics.
	if r := postJSON(t, url+"/v1/memories", `{"namespace":"a","memories":[{"id":"1","text":"one"},{"id":"2","text":"two"}]}`); r.code != http.StatusCreated {
		t.Fatalf("add: %d %s", r.code, r.body)
	}
	metrics := string(do(t, http.MethodGet, url+"/metrics", "", "").body)
	for _, want := range []string{"rerankd_memory_namespaces 1", "rerankd_memory_indexed 2", "rerankd_memory_vectors 0", "rerankd_memory_backfill_failed 0"} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(metrics, "rerankd_memory_namespaces_resident") {
		t.Error("an embedded store reports the shared store's follower")
	}
	url = start(t, DefaultConfig(), &fakeBackend{})
	info = api.Info{}
	decodeInto(t, do(t, http.MethodGet, url+"/info", "", ""), &info)
	if info.Memory != nil {
		t.Fatalf("memory API off, /info says %+v", info.Memory)
	}
}
