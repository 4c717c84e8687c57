package serve

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
)

// TestSearchFilters: typed metadata goes in and comes back as sent, and
// /v1/search and GET /v1/memories/{ns} keep only the memories a filter
// matches.
func TestSearchFilters(t *testing.T) {
	base := startMemory(t, DefaultConfig(), &fakeBackend{}, retrieval.DefaultConfig())
	var b strings.Builder
	b.WriteString(`{"namespace":"alice","memories":[`)
	for i := range 60 {
		if i > 0 {
			b.WriteString(",")
		}
		kind := "event"
		if i%10 == 0 {
			kind = "fact"
		}
		fmt.Fprintf(&b, `{"id":"m%02d","text":"alice paris note %d","time":"2025-01-%02dT00:00:00Z","metadata":{"kind":%q,"n":%d,"done":%v}}`,
			i, i, 1+i%28, kind, i, i%2 == 0)
	}
	b.WriteString(`]}`)
	if r := postJSON(t, base+"/v1/memories", b.String()); r.code != http.StatusCreated {
		t.Fatalf("add: %d %s", r.code, r.body)
	}
	r := do(t, http.MethodGet, base+"/v1/memories/alice/m07", "", "")
	var m api.Memory
	decodeInto(t, r, &m)
	if m.Metadata["n"] != 7.0 || m.Metadata["done"] != false || m.Metadata["kind"] != "event" {
		t.Fatalf("typed metadata came back as %#v", m.Metadata)
	}
	cases := []struct {
		name, filters string
		want          int
	}{
		{"equality", `{"must":[{"key":"kind","match":{"value":"fact"}}]}`, 6},
		{"in", `{"must":[{"key":"n","match":{"any":[1,2,3,"4"]}}]}`, 3},
		{"ne", `{"must_not":[{"key":"kind","match":{"value":"event"}}]}`, 6},
		{"numeric range", `{"must":[{"key":"n","range":{"gte":10,"lt":20}}]}`, 10},
		{"time range", `{"must":[{"key":"time","range":{"gte":"2025-01-01T00:00:00Z","lt":"2025-01-02T00:00:00Z"}}]}`, 3},
		{"exists", `{"must_not":[{"is_empty":{"key":"done"}}]}`, 60},
		{"and/or", `{"must":[{"key":"done","match":{"value":true}}],"should":[{"key":"n","range":{"lt":4}},{"key":"n","range":{"gte":56}}]}`, 4},
	}
	for _, c := range cases {
		r := postJSON(t, base+"/v1/search", `{"namespace":"alice","query":"alice paris note","top_k":50,"filters":`+c.filters+`}`)
		var sr api.SearchResponse
		decodeInto(t, r, &sr)
		if r.code != 200 || len(sr.Results) != min(c.want, 50) {
			t.Errorf("search %s: %d, %d results, want %d (%s)", c.name, r.code, len(sr.Results), c.want, r.body)
		}
		r = do(t, http.MethodGet, base+"/v1/memories/alice?limit=7&filter="+url.QueryEscape(c.filters), "", "")
		var lr api.ListMemoriesResponse
		decodeInto(t, r, &lr)
		got := len(lr.Memories)
		for lr.Next != "" {
			r = do(t, http.MethodGet, base+"/v1/memories/alice?limit=7&after="+lr.Next+"&filter="+url.QueryEscape(c.filters), "", "")
			lr = api.ListMemoriesResponse{}
			decodeInto(t, r, &lr)
			got += len(lr.Memories)
		}
		if got != c.want {
			t.Errorf("list %s: %d memories, want %d", c.name, got, c.want)
		}
	}
	// Bad filters name the condition.
	for _, bad := range []struct{ filters, want string }{
		{`{"must":[{"key":"kind"}]}`, "filters.must[0]: want exactly one of"},
		{`{"must":[{"key":"time","range":{"gte":"yesterday"}}]}`, "RFC 3339"},
		{`{"must":[{"key":"kind","match":{"valeu":"x"}}]}`, `did you mean "value"?`},
	} {
		r := postJSON(t, base+"/v1/search", `{"namespace":"alice","query":"q","filters":`+bad.filters+`}`)
		var e api.Error
		decodeInto(t, r, &e)
		if r.code/100 != 4 || !strings.Contains(e.Message, bad.want) {
			t.Errorf("%s: %d %q, want a 4xx containing %q", bad.filters, r.code, e.Message, bad.want)
		}
	}
}
