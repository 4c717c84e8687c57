package testtiers

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module root, from this package's folder.
const root = "../.."

// tier is one line of scripts/test_tiers.txt.
type tier struct {
	dir, kind string
	run       *regexp.Regexp // mixed only
	line      int
}

func readTiers(t *testing.T) []tier {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "scripts", "test_tiers.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []tier
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		tr := tier{dir: fields[0], line: n}
		if len(fields) > 1 {
			tr.kind = fields[1]
		}
		switch {
		case tr.kind == "norace" && len(fields) == 2:
		case tr.kind == "mixed" && len(fields) == 3:
			if tr.run, err = regexp.Compile(fields[2]); err != nil {
				t.Errorf("test_tiers.txt:%d: %v", n, err)
				continue
			}
		default:
			t.Errorf("test_tiers.txt:%d: want `DIR norace` or `DIR mixed REGEXP`, got %q", n, line)
			continue
		}
		out = append(out, tr)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// concurrent reports the first construct in n that starts a goroutine: a go
// statement, a .Go(...) call (sync.WaitGroup, errgroup), t.Parallel,
// b.RunParallel or an httptest server (whose handlers run on goroutines of
// their own; not counted when static, see staticServer). It returns "" when
// there is none.
func concurrent(fset *token.FileSet, n ast.Node, static bool) string {
	found := ""
	ast.Inspect(n, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		switch x := n.(type) {
		case *ast.GoStmt:
			found = "go statement at " + fset.Position(x.Pos()).String()
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
				switch sel.Sel.Name {
				case "Go", "Parallel", "RunParallel":
					found = sel.Sel.Name + " call at " + fset.Position(x.Pos()).String()
				case "NewServer", "NewUnstartedServer", "NewTLSServer":
					if !static {
						found = sel.Sel.Name + " call at " + fset.Position(x.Pos()).String()
					}
				}
			}
		}
		return found == ""
	})
	return found
}

// parsed is one package folder's files, split into its code and its tests.
type parsed struct {
	fset        *token.FileSet
	code, tests []*ast.File
}

func parseDir(t *testing.T, dir string) parsed {
	t.Helper()
	p := parsed{fset: token.NewFileSet()}
	names, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("test_tiers.txt names %s, which has no Go files (%v)", dir, err)
	}
	for _, name := range names {
		f, err := parser.ParseFile(p.fset, name, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "_test.go") {
			p.tests = append(p.tests, f)
		} else {
			p.code = append(p.code, f)
		}
	}
	return p
}

// isTest reports whether fn is a function go test runs (Benchmarks run
// only with -bench, which make test does not pass).
func isTest(fn *ast.FuncDecl) bool {
	return fn.Recv == nil && (strings.HasPrefix(fn.Name.Name, "Test") || strings.HasPrefix(fn.Name.Name, "Fuzz")) &&
		fn.Name.Name != "TestMain"
}

// staticMark is the doc-comment line by which a test helper declares the
// httptest servers it starts static: their handlers only read what was
// written before the server started (a fake hub serving a folder, a 404 to
// everything), so they share nothing with the test for the race detector
// to catch (scripts/test_tiers.txt).
const staticMark = "testtiers: static server"

// staticServer reports whether fn's doc comment carries staticMark.
func staticServer(fn *ast.FuncDecl) bool {
	if fn.Doc == nil {
		return false
	}
	for _, c := range fn.Doc.List {
		if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == staticMark {
			return true
		}
	}
	return false
}

// goroutineTests returns the tests of p that start goroutines, directly or
// through the package's own test helpers (followed by name, to a fixed
// point), with the construct that does. Servers of helpers marked static
// (staticServer) do not count; anything else those helpers start does.
func goroutineTests(p parsed) map[string]string {
	funcs := map[string]*ast.FuncDecl{}
	for _, f := range p.tests {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil && fn.Recv == nil {
				funcs[fn.Name.Name] = fn
			}
		}
	}
	starts := map[string]string{}
	for name, fn := range funcs {
		if c := concurrent(p.fset, fn.Body, staticServer(fn)); c != "" {
			starts[name] = c
		}
	}
	for changed := true; changed; {
		changed = false
		for name, fn := range funcs {
			if starts[name] != "" {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name != name && starts[id.Name] != "" {
					starts[name] = "via " + id.Name + ": " + starts[id.Name]
					changed = true
				}
				return starts[name] == ""
			})
		}
	}
	out := map[string]string{}
	for name, c := range starts {
		if isTest(funcs[name]) {
			out[name] = c
		}
	}
	return out
}

// TestTiers: the no-race list holds only packages whose omission from the
// race detector loses nothing it could find.
func TestTiers(t *testing.T) {
	seen := map[string]bool{}
	for _, tr := range readTiers(t) {
		if seen[tr.dir] {
			t.Errorf("test_tiers.txt:%d: %s listed twice", tr.line, tr.dir)
		}
		seen[tr.dir] = true
		p := parseDir(t, tr.dir)
		switch tr.kind {
		case "norace":
			for _, f := range append(slices.Clip(p.code), p.tests...) {
				if c := concurrent(p.fset, f, false); c != "" {
					t.Errorf("%s is norace but starts goroutines (%s): make it `mixed REGEXP` or drop it from test_tiers.txt", tr.dir, c)
				}
			}
		case "mixed":
			tests := testNames(p)
			if !slices.ContainsFunc(tests, tr.run.MatchString) {
				t.Errorf("%s: regexp %s matches none of its tests", tr.dir, tr.run)
			}
			for name, c := range goroutineTests(p) {
				if !tr.run.MatchString(name) {
					t.Errorf("%s: %s starts goroutines (%s) but %s does not match it: it would never run under -race", tr.dir, name, c, tr.run)
				}
			}
		}
	}
}

// testNames returns the names of p's tests (isTest).
func testNames(p parsed) []string {
	var tests []string
	for _, f := range p.tests {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && isTest(fn) {
				tests = append(tests, fn.Name.Name)
			}
		}
	}
	return tests
}

// TestOracleSkip: the oracle tier runs every listed package in one go test
// with the mixed packages' regexps joined as its -skip (scripts/gotest.sh),
// so no test of a listed package may match another package's regexp
// unless its own matches too: it would run in neither tier.
func TestOracleSkip(t *testing.T) {
	tiers := readTiers(t)
	for _, tr := range tiers {
		own := tr.run
		for _, name := range testNames(parseDir(t, tr.dir)) {
			if own != nil && own.MatchString(name) {
				continue // raced, as its own line says
			}
			for _, o := range tiers {
				if o.run != nil && o.run.MatchString(name) {
					t.Errorf("%s: %s matches %s's regexp %s, so the oracle tier would skip it and the race tier not run it: rename it or anchor that regexp",
						tr.dir, name, o.dir, o.run)
				}
			}
		}
	}
}

// TestStaticServer: a helper marked static may start httptest servers
// without making its callers goroutine-starting; a go statement in it, or
// an unmarked helper's server, still does.
func TestStaticServer(t *testing.T) {
	src := `package x
// hub serves a folder.
//
// testtiers: static server
func hub() { _ = httptest.NewServer(h) }

// hubAndLoop is marked, but starts a goroutine of its own.
//
// testtiers: static server
func hubAndLoop() { _ = httptest.NewServer(h); go loop() }

// plain is not marked.
func plain() { _ = httptest.NewServer(h) }

func TestStatic(t *testing.T) { hub() }
func TestMarkedGo(t *testing.T) { hubAndLoop() }
func TestPlain(t *testing.T) { plain() }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := goroutineTests(parsed{fset: fset, tests: []*ast.File{f}})
	for name, want := range map[string]bool{"TestStatic": false, "TestMarkedGo": true, "TestPlain": true} {
		if _, starts := got[name]; starts != want {
			t.Errorf("%s: goroutine-starting %v, want %v (%v)", name, starts, want, got)
		}
	}
}

// TestDetector: the construct finder sees each way a goroutine starts and
// nothing else.
func TestDetector(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"go f()", true},
		{"go func() {}()", true},
		{"var wg sync.WaitGroup; wg.Go(f)", true},
		{"t.Parallel()", true},
		{"b.RunParallel(f)", true},
		{"srv := httptest.NewServer(h); _ = srv", true},
		{"for i := range 3 { f(i) }", false},
		{"var mu sync.Mutex; mu.Lock()", false},
		{"t.Run(\"x\", f)", false},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\nfunc x() {\n"+c.src+"\n}\n", 0)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if got := concurrent(fset, f, false) != ""; got != c.want {
			t.Errorf("%q: concurrent = %v, want %v", c.src, got, c.want)
		}
	}
}
