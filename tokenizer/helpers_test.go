package tokenizer

import (
	"sync"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
)

// The real Qwen3 tokenizer is installed by scripts/setup.sh (make test runs
// it). Tests fail, not skip, without it: a silently skipped parity test
// would prove nothing.
var (
	qwenOnce sync.Once
	qwenTok  *Tokenizer
	qwenErr  error
)

func qwenPath() string { return testenv.TokenizerDir() }

func qwen(tb testing.TB) *Tokenizer {
	tb.Helper()
	qwenOnce.Do(func() { qwenTok, qwenErr = Load(qwenPath()) })
	if qwenErr != nil {
		tb.Fatalf("Qwen3 tokenizer not available (run scripts/setup.sh or set RERANKD_TOKENIZER): %v", qwenErr)
	}
	return qwenTok
}
