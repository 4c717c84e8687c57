package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/client"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
	"github.com/rerankd/rerankd/scoring"
	"github.com/rerankd/rerankd/serve"
)

// startServer runs a real rerankd server on the lexical default with a
// memory store in a temporary folder, and returns its URL and a stop.
func startServer() (string, func()) {
	dir, err := os.MkdirTemp("", "rerankd-client-example")
	if err != nil {
		log.Fatal(err)
	}
	st, err := bolt.Open(filepath.Join(dir, "m.db"), bolt.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	cfg := serve.DefaultConfig()
	cfg.APIKeys = []string{"example-key-1"}
	backend := scoring.NewLexical(lexical.Default())
	rcfg := retrieval.DefaultConfig()
	rcfg.Rerank = scoring.Reranking(backend, cfg.MaxDocuments, cfg.MaxTokensPerDoc) // the scorer /rerank uses
	svc, err := retrieval.New(st, nil, rcfg)
	if err != nil {
		log.Fatal(err)
	}
	svc.Start()
	if err := svc.Wait(context.Background()); err != nil {
		log.Fatal(err)
	}
	srv, err := serve.New(cfg, backend, serve.Limits{QueueSize: 64, BatchTokens: 4096, MaxBatch: 8}, nil,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		log.Fatal(err)
	}
	srv.WithMemory(svc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = svc.Close()
		_ = st.Close()
		_ = os.RemoveAll(dir)
	}
}

func Example_rerank() {
	url, stop := startServer()
	defer stop()
	c, err := client.New(client.Config{BaseURL: url, APIKey: "example-key-1"})
	if err != nil {
		log.Fatal(err)
	}
	topN := 2
	res, err := c.Rerank(context.Background(), api.RerankRequest{
		Query: "What did Caroline do at the support group?",
		Documents: []api.Document{
			{Text: "Melanie painted a sunset over the lake."},
			{Text: "Caroline went to an LGBTQ support group yesterday."},
			{Text: "Caroline adopted a rescue cat."},
		},
		TopN: &topN,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res.Results {
		fmt.Println(r.Index)
	}
	// Output:
	// 1
	// 2
}

func Example_memories() {
	url, stop := startServer()
	defer stop()
	c, err := client.New(client.Config{BaseURL: url, APIKey: "example-key-1"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.AddMemories(ctx, api.AddMemoriesRequest{MemoryIn: api.MemoryIn{Namespace: "alice"}, Memories: []api.MemoryIn{
		{ID: "m1", Text: "Alice moved to Paris in May"},
		{ID: "m2", Text: "Alice likes green tea"},
		{ID: "m3", Text: "Bob plays the cello"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	found, err := c.Search(ctx, api.SearchRequest{Namespace: "alice", Query: "Where did Alice move?"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(found.Results[0].ID, found.Results[0].Text)

	deleted, err := c.DeleteMemory(ctx, "alice", "m1")
	fmt.Println(deleted, err)
	_, err = c.GetMemory(ctx, "alice", "m1")
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Type)
	}
	// Output:
	// m1 Alice moved to Paris in May
	// true <nil>
	// 404 not_found
}

func Example_errors() {
	url, stop := startServer()
	defer stop()
	c, err := client.New(client.Config{BaseURL: url, APIKey: "wrong-key-1"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Info(context.Background())
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Type, e.Temporary())
	}
	// Output:
	// 401 unauthorized false
}
