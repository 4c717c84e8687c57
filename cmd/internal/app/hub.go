package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"

	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/model/hf"
)

// Download fetches a repo into the cache with a progress bar per file.
// HF_ENDPOINT and HF_TOKEN (or HUGGING_FACE_HUB_TOKEN) are honoured.
func Download(repo, revision string, stderr io.Writer) (string, error) {
	cfg := hf.DefaultConfig()
	cfg.Endpoint = paths.HubEndpoint(cfg.Endpoint)
	cfg.Token = paths.HubToken()
	cfg.Revision = revision
	cfg.CacheDir = filepath.Join(paths.CacheDir(), "hub")
	var mu sync.Mutex
	bars := map[string]*progress.Bar{}
	cfg.Progress = func(file string, done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		b, ok := bars[file]
		if !ok {
			b = progress.New(stderr, total, file, progress.Bytes)
			bars[file] = b
		}
		b.Set(done)
	}
	c, err := hf.NewClient(cfg)
	if err != nil {
		return "", err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stderr, "downloading %s@%s from %s\n", repo, revision, cfg.Endpoint)
	return c.Download(ctx, repo)
}
