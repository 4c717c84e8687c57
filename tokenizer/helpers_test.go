package tokenizer

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The real Qwen3 tokenizer is installed by scripts/setup.sh (make test runs
// it). Tests fail, not skip, without it: a silently skipped parity test
// would prove nothing.
var (
	qwenOnce sync.Once
	qwenTok  *Tokenizer
	qwenErr  error
)

func qwenPath() string {
	if p := os.Getenv("RERANKD_TOKENIZER"); p != "" {
		return p
	}
	cache := os.Getenv("RERANKD_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "rerankd")
	}
	return filepath.Join(cache, "tokenizers", "qwen3")
}

func qwen(tb testing.TB) *Tokenizer {
	tb.Helper()
	qwenOnce.Do(func() { qwenTok, qwenErr = Load(qwenPath()) })
	if qwenErr != nil {
		tb.Fatalf("Qwen3 tokenizer not available (run scripts/setup.sh or set RERANKD_TOKENIZER): %v", qwenErr)
	}
	return qwenTok
}
