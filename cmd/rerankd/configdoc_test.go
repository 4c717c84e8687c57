package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/cmd/internal/servecmd"
)

var update = flag.Bool("update", false, "rewrite docs/user/configuration.md from the help texts")

// configurationDoc is docs/user/configuration.md: every serve flag by
// group with its environment variable and default, then the other
// commands' help as they print it. Machine-dependent defaults (the cache
// and data folders) are written as the rules that make them.
func configurationDoc(t *testing.T) string {
	t.Helper()
	t.Setenv("RERANKD_CACHE", "~/.cache/rerankd")
	t.Setenv("RERANKD_DATA", "~/.local/share/rerankd")
	t.Setenv("ORT_LIB", "")
	t.Setenv("RERANKD_TOKENIZER", "")
	var b strings.Builder
	b.WriteString(`# Configuration

<!-- Generated from the help texts by TestConfigurationDoc (cmd/rerankd/configdoc_test.go):
     go test ./cmd/rerankd -run TestConfigurationDoc -update -->

Every flag of ` + "`rerankd serve`" + ` and ` + "`rerankd mcp`" + ` is also an environment variable: RERANKD_ and the
flag's name in upper case with ` + "`-`" + ` as ` + "`_`" + ` (` + "`--max-documents`" + `: ` + "`RERANKD_MAX_DOCUMENTS`" + `). A flag given on the command
line wins over its variable. ` + "`rerankd serve -h`" + ` lists the groups most deployments change;
` + "`rerankd serve --help-all`" + ` lists them all. Folders: ` + "`RERANKD_CACHE`" + ` (else ` + "`$XDG_CACHE_HOME/rerankd`" + `, else
` + "`~/.cache/rerankd`" + `) holds the runtime, tokenizer and converted models; ` + "`RERANKD_DATA`" + ` (else
` + "`$XDG_DATA_HOME/rerankd`" + `, else ` + "`~/.local/share/rerankd`" + `) holds the memories. Tracing reads the
OpenTelemetry variables ([tracing](tracing.md)).

`)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := servecmd.DefineFlags(fs)
	fs.StringVar(&f.Cfg.MCPNamespace, "namespace", app.DefaultMCPNamespace, "namespace of memory tools called without one")
	groups := append(append([]cli.FlagGroup{}, servecmd.Groups...), cli.FlagGroup{Title: "MCP", Note: "rerankd mcp only", Flags: []string{"namespace"}})
	for _, g := range cli.WithOthers(fs, groups) {
		fmt.Fprintf(&b, "## %s\n\n", g.Title)
		if g.Note != "" {
			fmt.Fprintf(&b, "%s%s.\n\n", strings.ToUpper(g.Note[:1]), g.Note[1:])
		}
		if g.More {
			b.WriteString("Listed by `--help-all`.\n\n")
		}
		b.WriteString("| flag | environment | default | what it sets |\n|---|---|---|---|\n")
		for _, name := range g.Flags {
			fl := fs.Lookup(name)
			def := fl.DefValue
			if def == "" {
				def = " "
			} else {
				def = "`" + def + "`"
			}
			fmt.Fprintf(&b, "| `--%s` | `%s` | %s | %s |\n", name, paths.FlagEnv(name), def, strings.ReplaceAll(fl.Usage, "|", `\|`))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Other commands\n\nTheir flags as `-h` prints them.\n\n")
	for _, args := range [][]string{{"score", "-h"}, {"convert", "-h"}, {"tokenize", "-h"}, {"store", "-h"},
		{"store", "check", "-h"}, {"store", "salvage", "-h"}, {"store", "copy", "-h"}} {
		_, _, errs := runCLI(t, args...)
		fmt.Fprintf(&b, "### rerankd %s\n\n```text\n%s\n```\n\n", strings.Join(args[:len(args)-1], " "), strings.TrimRight(errs, "\n"))
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// TestConfigurationDoc: docs/user/configuration.md is what the help texts
// say today; -update rewrites it.
func TestConfigurationDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "user", "configuration.md")
	got := configurationDoc(t)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./cmd/rerankd -run TestConfigurationDoc -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s is stale: run go test ./cmd/rerankd -run TestConfigurationDoc -update", path)
	}
}
