package main

import (
	"os"

	"github.com/rerankd/rerankd/cmd/internal/paths"
)

// cacheDir, defaultTokenizer: see cmd/internal/paths (shared with cmd/eval).
func cacheDir() string         { return paths.CacheDir() }
func defaultTokenizer() string { return paths.Tokenizer() }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
