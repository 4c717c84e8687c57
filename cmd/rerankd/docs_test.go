package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// userDocs are the pages a user reads: README.md and docs/user/.
func userDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "user", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "..", "README.md")}, pages...)
}

// codeSnippets returns the code a page shows: each line of a fenced
// block, and each `code span` of the prose.
func codeSnippets(text string) []string {
	var out []string
	fenced := false
	span := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i] // a shell comment
			}
			out = append(out, line)
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// TestDocsCommandsExist: every `rerankd CMD --flag` that README.md and
// docs/user show names a command of rerankd and a flag that command has
// (its --help-all), so no page teaches a command line that fails.
func TestDocsCommandsExist(t *testing.T) {
	cmdRe := regexp.MustCompile(`\brerankd ([a-z][a-z-]*)((?: +(?:check|salvage|copy))?)([^|]*)`)
	flagRe := regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	known := map[string][]string{} // command line -> its flags
	flagsOf := func(cmd string) []string {
		if fl, ok := known[cmd]; ok {
			return fl
		}
		args := append(strings.Fields(cmd), "--help")
		if cmd == "serve" || cmd == "mcp" {
			args[len(args)-1] = "--help-all"
		}
		code, _, errs := runCLI(t, args...)
		var fl []string
		if code == 0 {
			for _, m := range flagLine.FindAllStringSubmatch(errs, -1) {
				fl = append(fl, m[1])
			}
			fl = append(fl, "help", "help-all")
		}
		known[cmd] = fl
		return fl
	}
	var commands []string
	for _, c := range program().Commands {
		commands = append(commands, c.Name)
	}
	checked := 0
	for _, page := range userDocs(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(page)
		for _, snip := range codeSnippets(string(raw)) {
			for _, m := range cmdRe.FindAllStringSubmatch(snip, -1) {
				cmd := m[1]
				if !slices.Contains(commands, cmd) {
					if slices.Contains(labCommands, cmd) {
						t.Errorf("%s: %q is rerankd-bench's command now", name, "rerankd "+cmd)
					} else if !slices.Contains([]string{"serving", "is", "and", "was"}, cmd) { // prose after the name
						t.Errorf("%s: %q names no rerankd command", name, "rerankd "+cmd)
					}
					continue
				}
				full := cmd + m[2]
				flags := flagsOf(strings.TrimSpace(full))
				for _, f := range flagRe.FindAllStringSubmatch(m[3], -1) {
					checked++
					if !slices.Contains(flags, f[1]) {
						t.Errorf("%s: rerankd %s has no flag --%s (in %q)", name, strings.TrimSpace(full), f[1], strings.TrimSpace(snip))
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d flags checked: the scan lost the pages' commands", checked)
	}
}

// TestDocsLinks: every relative link in README.md and docs/ names a file
// that exists.
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	var pages []string
	_ = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return nil
	})
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "cmd", "rerankd-bench", "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				rel, _ := filepath.Rel(root, page)
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
			}
		}
	}
}
