package retrieval

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// onDisk are the service's types whose JSON is a file format, not an API
// (none: the snapshot format is retrieval/snap's, which this test does not
// read).
var onDisk = map[string]bool{}

// TestNoWireTags: the service's types (this package's and its keepers')
// carry no JSON tags. What the server answers is shaped by api/ and
// mapped in serve, so changing a field here cannot change the HTTP API
// unseen.
func TestNoWireTags(t *testing.T) {
	var files []string
	for _, dir := range []string{".", "keep", "owner", "follow"} {
		got, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, got...)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || onDisk[ts.Name.Name] {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fl := range st.Fields.List {
				if fl.Tag == nil {
					continue
				}
				tag := reflect.StructTag(strings.Trim(fl.Tag.Value, "`"))
				if _, has := tag.Lookup("json"); has {
					t.Errorf("%s: %s has a JSON tag: wire types live in api/ (serve maps them)", fset.Position(fl.Pos()), ts.Name.Name)
				}
			}
			return true
		})
	}
}
