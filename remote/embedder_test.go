package remote

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestEmbedder: vectors come back in order, split into requests of
// MaxInputs, through 429s; the query prefix goes on queries only; the
// dimension is learned; the cache serves a second run.
func TestEmbedder(t *testing.T) {
	f := &fake{dim: 6, every429: 4, retryAfter: "0"}
	url := f.start(t)
	c, err := OpenCache(filepath.Join(t.TempDir(), "c"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := EmbedderConfig{Transport: fastTransport(url), Model: "e", QueryPrefix: "Query: ", MaxInputs: 3}
	cfg.Cache, cfg.Timeout = c, time.Second
	e, err := NewEmbedder(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 6 {
		t.Fatalf("dim %d", e.Dim())
	}
	texts := docs(10)
	for _, isQuery := range []bool{false, true} {
		got, err := e.Embed(context.Background(), texts, isQuery)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			want := texts[i]
			if isQuery {
				want = "Query: " + want
			}
			w := fakeVec(want, 6)
			for j := range v {
				if v[j] != w[j] {
					t.Fatalf("query %v text %d: %v, want %v", isQuery, i, v, w)
				}
			}
		}
	}
	sent := f.served.Load()
	if _, err := e.Embed(context.Background(), texts, true); err != nil || f.served.Load() != sent {
		t.Errorf("cached run: %v, %d more requests", err, f.served.Load()-sent)
	}
	if f.refused429.Load() == 0 {
		t.Error("no 429 was exercised")
	}
}
