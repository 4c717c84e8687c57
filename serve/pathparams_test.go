package serve

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/scoring"
)

// TestEncodedPathSegments: a namespace or id sent percent-encoded (as
// encodeURIComponent and /docs "Try it out" send "alice:work") names the
// same memory as the literal one, for get, list and delete, through raw
// requests and through the Go client.
func TestEncodedPathSegments(t *testing.T) {
	base := startMemory(t, DefaultConfig(), scoring.NewLexical(lexical.Default()), retrieval.DefaultConfig())
	for _, id := range []string{"q1", "q2", "q:3"} {
		if r := postJSON(t, base+"/v1/memories", `{"namespace":"alice:work","id":"`+id+`","text":"the quarterly review is on Friday"}`); r.code != 201 {
			t.Fatalf("add %s: %d %s", id, r.code, r.body)
		}
	}
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/v1/memories/alice:work/q1", 200},
		{"GET", "/v1/memories/alice%3Awork/q1", 200},
		{"GET", "/v1/memories/alice%3awork/q%3A3", 200},
		{"GET", "/v1/memories/alice%3Awork", 200},
		{"DELETE", "/v1/memories/alice%3Awork/q2", 200},
		{"GET", "/v1/memories/alice:work/q2", 404},
		{"GET", "/v1/memories/alice%253Awork/q1", 422}, // decoded once: "alice%3Awork" has a '%'
	} {
		if r := do(t, c.method, base+c.path, "", ""); r.code != c.code {
			t.Errorf("%s %s: %d, want %d (%s)", c.method, c.path, r.code, c.code, r.body)
		}
	}
	cl, err := client.New(client.DefaultConfig(base))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := cl.GetMemory(ctx, "alice:work", "q:3")
	if err != nil || m.ID != "q:3" || m.Namespace != "alice:work" {
		t.Fatalf("client get: %+v, %v", m, err)
	}
	list, err := cl.ListMemories(ctx, "alice:work", client.ListOptions{Limit: 10})
	if err != nil || len(list.Memories) != 2 {
		t.Fatalf("client list: %+v, %v", list, err)
	}
	if ok, err := cl.DeleteMemory(ctx, "alice:work", "q:3"); !ok || err != nil {
		t.Fatalf("client delete: %v, %v", ok, err)
	}
	var ce *client.Error
	if _, err := cl.GetMemory(ctx, "alice:work", "q:3"); !errors.As(err, &ce) || ce.Status != http.StatusNotFound {
		t.Fatalf("after delete: %v", err)
	}
}
