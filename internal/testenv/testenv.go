// Package testenv locates the run-time files scripts/setup.sh installs, for
// tests only (production code gets paths from cmd/ flags). Tests that need
// them fail with a message naming the fix rather than skip: a skipped parity
// or runtime test would prove nothing in CI, where make test installs them.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// CacheDir mirrors scripts/setup.sh: $RERANKD_CACHE, else
// ${XDG_CACHE_HOME:-~/.cache}/rerankd.
func CacheDir() string {
	if d := os.Getenv("RERANKD_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "rerankd")
}

// TokenizerDir is $RERANKD_TOKENIZER or the Qwen3 tokenizer in the cache.
func TokenizerDir() string {
	if p := os.Getenv("RERANKD_TOKENIZER"); p != "" {
		return p
	}
	return filepath.Join(CacheDir(), "tokenizers", "qwen3")
}

// ORTLib is $ORT_LIB or the ONNX Runtime library in the cache.
func ORTLib() string {
	if p := os.Getenv("ORT_LIB"); p != "" {
		return p
	}
	return filepath.Join(CacheDir(), "onnxruntime", "1.30.0", "libonnxruntime.so.1")
}

// Require fails tb unless path exists.
func Require(tb testing.TB, path string) {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("%v: run scripts/setup.sh (make test does)", err)
	}
}
