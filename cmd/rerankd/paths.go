package main

import (
	"github.com/rerankd/rerankd/cmd/internal/paths"
)

// defaultTokenizer: see cmd/internal/paths (shared with cmd/eval),
// the one place that reads the environment.
func defaultTokenizer() string { return paths.Tokenizer() }
