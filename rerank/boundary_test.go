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
