package main

import (
	"os"
	"path/filepath"
)

// cacheDir is where scripts/setup.sh installs run-time files: $RERANKD_CACHE,
// else $XDG_CACHE_HOME/rerankd, else ~/.cache/rerankd. Keep in step with
// scripts/setup.sh.
func cacheDir() string {
	if d := os.Getenv("RERANKD_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "rerankd")
}

// defaultTokenizer is $RERANKD_TOKENIZER or the Qwen3 files setup installs.
func defaultTokenizer() string {
	if p := os.Getenv("RERANKD_TOKENIZER"); p != "" {
		return p
	}
	return filepath.Join(cacheDir(), "tokenizers", "qwen3")
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
