package paths

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model"
)

// repoRoot is the module root, two folders above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestORTVersionOneSource: ortversion.Required (model.RequiredORT) is the one Go constant naming
// the ONNX Runtime release. No other Go file spells it, and the shell
// files that install or locate the library agree with it.
func TestORTVersionOneSource(t *testing.T) {
	root := repoRoot(t)
	literal := `"` + model.RequiredORT + `"`
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "shared") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("internal", "ortversion", "ortversion.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), literal) {
			t.Errorf("%s spells the ONNX Runtime version %s: use model.RequiredORT", rel, literal)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	setup, err := os.ReadFile(filepath.Join(root, "scripts", "setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(setup), "\nORT_VERSION="+model.RequiredORT+"\n") {
		t.Errorf("scripts/setup.sh does not set ORT_VERSION=%s (model.RequiredORT)", model.RequiredORT)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mk), "onnxruntime/1.") || strings.Contains(string(mk), "ORT_VERSION") {
		t.Error("the Makefile names an ONNX Runtime version: it must leave that to scripts/setup.sh")
	}
}

// TestCacheRulesAgree: the cache folder rule is written in Go here, in
// internal/testenv (which cannot import this package), in the shell
// scripts and in the Makefile; they must say the same.
func TestCacheRulesAgree(t *testing.T) {
	root := repoRoot(t)
	const sh = `${RERANKD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rerankd}`
	for file, rule := range map[string]string{
		"scripts/setup.sh":                  `CACHE="` + sh + `"`,
		"scripts/setup_browser.sh":          `CACHE="` + sh + `"`,
		"scripts/vulncheck.sh":              `CACHE="` + sh + `"`,
		"scripts/setup_image.sh":            `CACHE="` + sh + `"`,
		"scripts/bench_tokenizer.sh":        `CACHE="` + sh + `"`,
		"scripts/tokenizer/regen_golden.sh": `cache="` + sh + `"`,
		"Makefile":                          `CACHE := $(or $(RERANKD_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rerankd)`,
	} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), rule) {
			t.Errorf("%s lacks the cache rule %s (RERANKD_CACHE, else $XDG_CACHE_HOME/rerankd, else ~/.cache/rerankd: CacheDir)", file, rule)
		}
	}
	for _, env := range []map[string]string{
		{"RERANKD_CACHE": "/c"},
		{"RERANKD_CACHE": "", "XDG_CACHE_HOME": "/x"},
		{"RERANKD_CACHE": "", "XDG_CACHE_HOME": "", "HOME": "/h"},
		{"ORT_LIB": "/lib.so", "RERANKD_TOKENIZER": "/tok"},
	} {
		t.Run("", func(t *testing.T) {
			for _, k := range []string{"RERANKD_CACHE", "XDG_CACHE_HOME", "ORT_LIB", "RERANKD_TOKENIZER"} {
				t.Setenv(k, env[k])
			}
			if h, ok := env["HOME"]; ok {
				t.Setenv("HOME", h)
			}
			for _, c := range []struct{ what, got, want string }{
				{"CacheDir", testenv.CacheDir(), CacheDir()},
				{"ORTLib", testenv.ORTLib(), ORTLib()},
				{"TokenizerDir", testenv.TokenizerDir(), Tokenizer()},
			} {
				if c.got != c.want {
					t.Errorf("%v: testenv.%s %q, paths %q", env, c.what, c.got, c.want)
				}
			}
		})
	}
}

// TestNoCgo: paths locates the ONNX Runtime library without linking the
// cgo binding (the model package), so every command may import it.
func TestNoCgo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/rerankd/rerankd/model" || strings.Contains(p, "onnxruntime") {
			t.Errorf("cmd/internal/paths links %s", p)
		}
	}
}
