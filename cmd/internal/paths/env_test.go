package paths

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// envReaders are the functions that read the environment (os.Environ,
// which passes it on to a child process, is not one of them).
var envReaders = map[string]map[string]bool{
	"os":      {"Getenv": true, "LookupEnv": true, "ExpandEnv": true, "UserHomeDir": true, "UserCacheDir": true, "UserConfigDir": true},
	"syscall": {"Getenv": true},
}

// TestOneEnvironmentHome: outside this package and internal/testenv (test
// support, which reads only test variables), no Go file but a test reads
// the environment, called or passed as a function value.
func TestOneEnvironmentHome(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "shared" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		// Test support (testenv, the shared fixtures, the crash harness)
		// reads only test variables.
		if strings.HasPrefix(rel, "cmd/internal/paths/") || strings.HasPrefix(rel, "internal/testenv/") ||
			strings.HasPrefix(rel, "internal/fixture/") || strings.HasPrefix(rel, "internal/crashtest/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		if ignoredByBuild(f) { // a go:build ignore tool, outside every binary
			return nil
		}
		names := map[string]string{} // local name -> import path, for the packages above
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if envReaders[p] == nil {
				continue
			}
			name := p
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && envReaders[names[x.Name]][sel.Sel.Name] {
				t.Errorf("%s: %s.%s reads the environment: read it in cmd/internal/paths", fset.Position(sel.Pos()), names[x.Name], sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestApplyFlagEnv: unset flags come from RERANKD_<FLAG>, given ones win,
// every refused value is named.
func TestApplyFlagEnv(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	docs := fs.Int("max-documents", 1, "")
	addr := fs.String("addr", "a", "")
	key := fs.String("api-key", "k", "")
	t.Setenv("RERANKD_MAX_DOCUMENTS", "7")
	t.Setenv("RERANKD_ADDR", "from env")
	t.Setenv("RERANKD_API_KEY", "")
	if err := fs.Parse([]string{"--addr", "flag"}); err != nil {
		t.Fatal(err)
	}
	if err := ApplyFlagEnv(fs); err != nil {
		t.Fatal(err)
	}
	if *docs != 7 || *addr != "flag" || *key != "" {
		t.Errorf("max-documents %d, addr %q, api-key %q; want 7, flag, empty", *docs, *addr, *key)
	}
	t.Setenv("RERANKD_MAX_DOCUMENTS", "lots")
	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Int("max-documents", 1, "")
	if err := ApplyFlagEnv(fs); err == nil || !strings.Contains(err.Error(), `RERANKD_MAX_DOCUMENTS="lots"`) {
		t.Errorf("bad value: %v", err)
	}
	if FlagEnv("prefix-cache-mb") != "RERANKD_PREFIX_CACHE_MB" {
		t.Errorf("FlagEnv(prefix-cache-mb) = %s", FlagEnv("prefix-cache-mb"))
	}
}

// TestHub: HF_TOKEN wins over HUGGING_FACE_HUB_TOKEN; HF_ENDPOINT over the
// default.
func TestHub(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "old")
	if HubEndpoint("https://hub") != "https://hub" || HubToken() != "old" {
		t.Errorf("defaults: %q %q", HubEndpoint("https://hub"), HubToken())
	}
	t.Setenv("HF_ENDPOINT", "http://mirror")
	t.Setenv("HF_TOKEN", "new")
	if HubEndpoint("https://hub") != "http://mirror" || HubToken() != "new" {
		t.Errorf("set: %q %q", HubEndpoint("https://hub"), HubToken())
	}
}

// ignoredByBuild reports whether f carries a //go:build ignore constraint.
func ignoredByBuild(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}
