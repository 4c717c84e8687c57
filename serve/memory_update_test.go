package serve

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/retrieval"
)

// TestUpdateForgetNamespaces: PATCH changes only what it names and is
// searchable at once; DELETE of a namespace removes it all; GET
// /v1/namespaces lists what a key may see.
func TestUpdateForgetNamespaces(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"alice-key-123", "admin-key-789"}
	cfg.KeyScopes = map[string][]string{"alice-key-123": {"alice"}}
	base := startMemory(t, cfg, &fakeBackend{}, retrieval.DefaultConfig())
	admin := []string{"Authorization", "Bearer admin-key-789"}
	alice := []string{"Authorization", "Bearer alice-key-123"}
	for _, body := range []string{
		`{"namespace":"alice","memories":[{"id":"m1","text":"alice lives in paris","source":"/s","metadata":{"kind":"fact","keep":"yes"}},{"id":"m2","text":"alice likes tea"}]}`,
		`{"namespace":"bob","memories":[{"id":"b1","text":"bob likes coffee"}]}`,
	} {
		if r := postJSON(t, base+"/v1/memories", body, admin...); r.code != 201 {
			t.Fatalf("add: %d %s", r.code, r.body)
		}
	}
	r := do(t, http.MethodPatch, base+"/v1/memories/alice/m1", "application/json",
		`{"text":"alice moved to berlin","metadata":{"kind":"old fact","n":2,"keep":null}}`, alice...)
	var up api.UpdateMemoryResponse
	decodeInto(t, r, &up)
	if r.code != 200 || up.Text != "alice moved to berlin" || up.Source != "/s" || up.Metadata["kind"] != "old fact" ||
		up.Metadata["n"] != 2.0 || up.Metadata["keep"] != nil || len(up.Metadata) != 2 {
		t.Fatalf("update: %d %s", r.code, r.body)
	}
	search := func(q string) []string {
		r := postJSON(t, base+"/v1/search", `{"namespace":"alice","query":"`+q+`"}`, admin...)
		var sr api.SearchResponse
		decodeInto(t, r, &sr)
		var ids []string
		for _, x := range sr.Results {
			ids = append(ids, x.ID)
		}
		return ids
	}
	if got := search("berlin"); len(got) != 1 || got[0] != "m1" {
		t.Errorf("search berlin after update: %v", got)
	}
	if got := search("paris"); len(got) != 0 {
		t.Errorf("search paris after update: %v (old text still indexed)", got)
	}

	names := func(key []string) string {
		r := do(t, http.MethodGet, base+"/v1/namespaces", "", "", key...)
		var nr api.NamespacesResponse
		decodeInto(t, r, &nr)
		var out []string
		for _, n := range nr.Namespaces {
			out = append(out, n.Namespace+":"+string(rune('0'+n.Memories)))
		}
		return strings.Join(out, ",")
	}
	if got := names(admin); got != "alice:2,bob:1" {
		t.Errorf("admin namespaces %q", got)
	}
	if got := names(alice); got != "alice:2" {
		t.Errorf("alice's namespaces %q", got)
	}

	r = do(t, http.MethodDelete, base+"/v1/memories/alice", "", "", alice...)
	var fr api.ForgetResponse
	decodeInto(t, r, &fr)
	if r.code != 200 || fr.Deleted != 2 || fr.Namespace != "alice" {
		t.Fatalf("forget: %d %s", r.code, r.body)
	}
	if got := search("alice"); len(got) != 0 {
		t.Errorf("search after forget: %v", got)
	}
	if r := do(t, http.MethodGet, base+"/v1/memories/alice/m2", "", "", admin...); r.code != 404 {
		t.Errorf("get after forget: %d", r.code)
	}
	if got := names(admin); got != "bob:1" {
		t.Errorf("namespaces after forget %q", got)
	}
	// The namespace can be written again.
	if r := postJSON(t, base+"/v1/memories", `{"namespace":"alice","id":"n1","text":"alice again"}`, alice...); r.code != 201 {
		t.Fatalf("re-add: %d", r.code)
	}
	if got := search("again"); len(got) != 1 {
		t.Errorf("search after re-add: %v", got)
	}
}

// TestMCPMemoryTools: memory_get, memory_update and memory_forget run the
// HTTP API's code; rerank returns each document's text.
func TestMCPMemoryTools(t *testing.T) {
	url, _ := startMCP(t, DefaultConfig())
	cs, err := connectHTTP(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct{ tool, args, want string }{
		{"memory_add", `{"namespace":"a","id":"x","text":"the sky is green","metadata":{"n":1}}`, `"id":"x"`},
		{"memory_get", `{"namespace":"a","id":"x"}`, `"metadata":{"n":1}`},
		{"memory_update", `{"namespace":"a","id":"x","text":"the sky is blue"}`, `"text":"the sky is blue"`},
		{"memory_search", `{"namespace":"a","query":"sky","filters":{"must":[{"key":"n","range":{"gte":1}}]}}`, `"id":"x"`},
		{"memory_forget", `{"namespace":"a"}`, `"deleted":1`},
		{"rerank", `{"query":"blue sky","documents":["grass is green","the sky is blue"]}`, `"text":"the sky is blue"`},
	}
	for _, s := range steps {
		r := call(t, cs, s.tool, s.args)
		if r.IsError || !strings.Contains(text(r), s.want) {
			t.Fatalf("%s %s: isError %v %s, want %s", s.tool, s.args, r.IsError, text(r), s.want)
		}
	}
	for _, bad := range []struct{ tool, args, want string }{
		{"memory_forget", `{}`, "namespace: required"},
		{"memory_get", `{"namespace":"a","id":"x"}`, "not found"},
		{"memory_update", `{"namespace":"a","id":"x","txt":"y"}`, `did you mean "text"?`},
	} {
		r := call(t, cs, bad.tool, bad.args)
		if !r.IsError || !strings.Contains(text(r), bad.want) {
			t.Errorf("%s %s: isError %v %s, want an error with %q", bad.tool, bad.args, r.IsError, text(r), bad.want)
		}
	}
}
