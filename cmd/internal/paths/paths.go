// Package paths locates rerankd's run-time files (the ONNX Runtime library
// and tokenizer that scripts/setup.sh installs, converted models, memory
// data) for both commands. It reads the environment, which is why it lives
// under cmd/: library packages never do.
package paths

import (
	"os"
	"path/filepath"

	"github.com/rerankd/rerankd/model"
)

// CacheDir is where scripts/setup.sh installs run-time files:
// $RERANKD_CACHE, else $XDG_CACHE_HOME/rerankd, else ~/.cache/rerankd.
// scripts/setup.sh, the Makefile and internal/testenv write the same rule;
// TestCacheRulesAgree holds them to it.
func CacheDir() string {
	if d := os.Getenv("RERANKD_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		base = filepath.Join(home(), ".cache")
	}
	return filepath.Join(base, "rerankd")
}

// ORTLib is $ORT_LIB or the library scripts/setup.sh installs, under the
// release model.RequiredORT names (the one Go constant for it; setup.sh's
// ORT_VERSION is checked against it by TestORTVersionOneSource).
func ORTLib() string {
	if p := os.Getenv("ORT_LIB"); p != "" {
		return p
	}
	return filepath.Join(CacheDir(), "onnxruntime", model.RequiredORT, "libonnxruntime.so.1")
}

// Tokenizer is $RERANKD_TOKENIZER or the Qwen3 tokenizer folder setup installs.
func Tokenizer() string {
	if p := os.Getenv("RERANKD_TOKENIZER"); p != "" {
		return p
	}
	return filepath.Join(CacheDir(), "tokenizers", "qwen3")
}

// DataDir holds memories (data, not cache): $RERANKD_DATA, else
// $XDG_DATA_HOME/rerankd, else ~/.local/share/rerankd.
func DataDir() string {
	if d := os.Getenv("RERANKD_DATA"); d != "" {
		return d
	}
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		base = filepath.Join(home(), ".local", "share")
	}
	return filepath.Join(base, "rerankd")
}

func home() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return "."
	}
	return h
}
