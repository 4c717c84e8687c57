// Package tokentest gives tests the Qwen3 tokenizer that scripts/setup.sh
// installs (testenv.TokenizerDir). It is its own package because
// internal/testenv cannot import tokenizer: tokenizer's tests use testenv.
package tokentest

import (
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/tokenizer"
)

// Qwen returns the shared Qwen3 tokenizer (tokenizer.Shared: loaded once
// per process) or fails tb, saying how to install it.
func Qwen(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	tok, err := tokenizer.Shared(testenv.TokenizerDir())
	if err != nil {
		tb.Fatalf("Qwen3 tokenizer: %v (run scripts/setup.sh)", err)
	}
	return tok
}
