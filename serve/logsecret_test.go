package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// TestLogsCarryNoMemoryText: at the default level (info) nothing a user
// wrote — memory text, queries, documents, namespaces' contents — reaches
// the log, including on failures (which are logged).
func TestLogsCarryNoMemoryText(t *testing.T) {
	const secret = "zebracorn-4417"
	var logs testenv.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, err := bolt.Open(filepath.Join(t.TempDir(), "m.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBackend{}
	e, err := retrieval.New(st, nil, withScorer(retrieval.DefaultConfig(), DefaultConfig(), b))
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	t.Cleanup(func() { _ = e.Close(); _ = st.Close() })
	srv, err := New(DefaultConfig(), b, Limits{QueueSize: 64, BatchTokens: 4096, MaxBatch: 8}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	srv.WithMemory(e)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	url := "http://" + ln.Addr().String()

	postJSON(t, url+"/v1/memories", `{"namespace":"u","id":"m1","text":"my pin is `+secret+`"}`)
	postJSON(t, url+"/v1/search", `{"namespace":"u","query":"what is my pin `+secret+`"}`)
	postJSON(t, url+"/rerank", `{"query":"`+secret+`","documents":["`+secret+`"]}`)
	postJSON(t, url+"/v1/memories", `{"namespace":"u","text":"`+secret+`","vector":[1]}`) // 422
	b.err = errors.New("backend exploded")                                                // logged as a failure
	postJSON(t, url+"/rerank", `{"query":"`+secret+`","documents":["`+secret+` doc"]}`)
	postJSON(t, url+"/v1/search", `{"namespace":"u","query":"`+secret+`"}`)
	if !strings.Contains(logs.String(), "request failed") {
		t.Fatalf("the backend failure was not logged at all: %q", logs.String())
	}
	if strings.Contains(logs.String(), secret) {
		t.Fatalf("user text in the log:\n%s", logs.String())
	}
}
