package rerank

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// ortPath is the cgo binding to ONNX Runtime.
const ortPath = "github.com/yalue/onnxruntime_go"

// goList runs `go list` in the module root with args and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg += ": " + string(ee.Stderr)
		}
		t.Fatalf("go list %s: %s", strings.Join(args, " "), msg)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestCgoBoundary holds the cgo boundary: the server, retrieval, the
// lexical scorer and this package build without ONNX Runtime (a neural
// backend reaches serve as a rerank.Scorer over an Engine that cmd/rerankd
// opens with package model), and model is the only package that imports
// the binding or has cgo files, tests included.
func TestCgoBoundary(t *testing.T) {
	const model = "github.com/rerankd/rerankd/model"
	for _, dep := range goList(t, "-deps", "./serve", "./retrieval/...", "./lexical", "./rerank") {
		if dep == ortPath || dep == model {
			t.Errorf("serve, retrieval, lexical or rerank depends on %s", dep)
		}
	}
	for _, line := range goList(t, "-e", "-f", "{{.ImportPath}}|{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}|{{join .CgoFiles \" \"}}", "./...") {
		pkg, rest, _ := strings.Cut(line, "|")
		imports, cgo, _ := strings.Cut(rest, "|")
		if pkg == model {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if imp == ortPath {
				t.Errorf("%s imports %s: only %s may", pkg, ortPath, model)
			}
		}
		if strings.TrimSpace(cgo) != "" {
			t.Errorf("%s has cgo files (%s): only %s may", pkg, cgo, model)
		}
	}
}

// TestLayering holds the direction of the layers: no package below the
// fronts (serve, the commands, the Go client) imports the HTTP/MCP server
// or a command, so no lower layer can call back up; a command imports no
// other command's package (only cmd/internal and its own sub-packages).
// Test files count too.
func TestLayering(t *testing.T) {
	const mod = "github.com/rerankd/rerankd/"
	front := func(pkg string) bool {
		return pkg == mod+"serve" || pkg == mod+"client" || strings.HasPrefix(pkg, mod+"cmd/")
	}
	for _, line := range goList(t, "-e", "-f", "{{.ImportPath}}|{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...") {
		pkg, imports, _ := strings.Cut(line, "|")
		for _, imp := range strings.Fields(imports) {
			switch {
			case !front(pkg) && front(imp):
				t.Errorf("%s imports %s: a lower layer never depends on a front (serve, client, cmd/...)", pkg, imp)
			case strings.HasPrefix(pkg, mod+"cmd/") && strings.HasPrefix(imp, mod+"cmd/") &&
				!strings.HasPrefix(imp, mod+"cmd/internal/") && !strings.HasPrefix(pkg, imp) &&
				!strings.HasPrefix(imp, pkg+"/"): // a command's own internal packages are its own
				t.Errorf("%s imports %s: commands share code through cmd/internal only", pkg, imp)
			}
		}
	}
}

// serveRetrievalToday lists the retrieval sub-packages serve may still
// import: none since issue 42 sealed the memory service (its request
// mapping, validation and error kinds live in package retrieval). The
// list only shrinks: TestServeSealing fails on any import not listed, and
// on one listed here that serve no longer imports.
var serveRetrievalToday = map[string]bool{}

// TestServeSealing: serve reaches retrieval through its top package, not
// its parts, beyond the shrinking list above.
func TestServeSealing(t *testing.T) {
	const sub = "github.com/rerankd/rerankd/retrieval/"
	seen := map[string]bool{}
	for _, imp := range goList(t, "-f", "{{join .Imports \"\\n\"}}", "./serve") {
		if !strings.HasPrefix(imp, sub) {
			continue
		}
		seen[imp] = true
		if !serveRetrievalToday[imp] {
			t.Errorf("serve imports %s: reach the memory service through package retrieval only", imp)
		}
	}
	for imp := range serveRetrievalToday {
		if !seen[imp] {
			t.Errorf("serve no longer imports %s: remove it from serveRetrievalToday", imp)
		}
	}
}
