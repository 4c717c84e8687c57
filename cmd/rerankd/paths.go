package main

import (
	"github.com/rerankd/rerankd/cmd/internal/paths"
)

// cacheDir, defaultTokenizer: see cmd/internal/paths (shared with cmd/eval),
// the one place that reads the environment.
func cacheDir() string         { return paths.CacheDir() }
func defaultTokenizer() string { return paths.Tokenizer() }
