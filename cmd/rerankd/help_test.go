package main

import (
	"flag"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/servecmd"
)

// helpRuns are the command lines whose help TestHelp reads: every
// command's and subcommand's -h and --help, and --help-all where a
// command groups its flags.
func helpRuns() [][]string {
	runs := [][]string{{"-h"}, {"--help"}, {"help"}, {"serve", "--help-all"}, {"mcp", "--help-all"}}
	for _, c := range program().Commands {
		runs = append(runs, []string{c.Name, "-h"}, []string{c.Name, "--help"})
	}
	for _, sub := range []string{"check", "salvage", "copy"} {
		runs = append(runs, []string{"store", sub, "-h"}, []string{"store", sub, "--help"})
	}
	return runs
}

// TestHelp: every command and subcommand answers -h and --help with exit
// 0, and no help text quotes a measurement or turns a back-quoted word
// into a value name (cli.HelpProblems).
func TestHelp(t *testing.T) {
	for _, args := range helpRuns() {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr %s", code, errs)
			}
			help := out + errs
			if !strings.Contains(help, "sage") { // Usage / usage
				t.Errorf("no usage text:\n%s", help)
			}
			for _, p := range cli.HelpProblems(help) {
				t.Error(p)
			}
		})
	}
}

// TestServeHelpShape: serve -h lists at most 30 flags, under the groups
// an operator looks for; --help-all lists every flag, each in a named
// group; the binary has at most 8 commands.
func TestServeHelpShape(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^  -\S+`)
	_, _, short := runCLI(t, "serve", "-h")
	if n := len(flagLine.FindAllString(short, -1)); n > 30 {
		t.Errorf("serve -h lists %d flags, want <= 30", n)
	}
	for _, g := range []string{"Server:", "Model:", "Memory:", "Shared store", "Advanced:", "--help-all"} {
		if !strings.Contains(short, g) {
			t.Errorf("serve -h lacks %q", g)
		}
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	servecmd.DefineFlags(fs)
	_, _, all := runCLI(t, "serve", "--help-all")
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(all, "  -"+f.Name+" ") && !strings.Contains(all, "  -"+f.Name+"\n") {
			t.Errorf("serve --help-all does not list -%s", f.Name)
		}
	})
	if strings.Contains(all, "\nOther:") {
		t.Errorf("a serve flag is in no group:\n%s", all)
	}
	if n := len(program().Commands); n > 8 {
		t.Errorf("%d commands, want <= 8", n)
	}
}

// TestVersion: rerankd version reports the build's version, never the
// old "dev" placeholder.
func TestVersion(t *testing.T) {
	code, out, errs := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "rerankd ") || strings.TrimSpace(out) == "rerankd dev" || strings.TrimSpace(out) == "rerankd" {
		t.Errorf("version: exit %d, %q %q", code, out, errs)
	}
}

// TestServeAndMCPShareConfig: serve and mcp read the same flags into the
// same app.Config (they once rebuilt the server apart and drifted).
func TestServeAndMCPShareConfig(t *testing.T) {
	args := []string{"--model", "m", "--threads", "3", "--store", "none", "--quant", "int8", "--embed-model", "e", "--prefix-cache-mb", "7",
		"--workers", "2", "--attention-form=false", "--session-cache", "auto"}
	parse := func(name string) app.Config {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		f := servecmd.DefineFlags(fs)
		if name == "mcp" {
			fs.StringVar(&f.Cfg.MCPNamespace, "namespace", app.DefaultMCPNamespace, "")
		}
		if _, err := servecmd.Parse(fs, f, args, io.Discard); err != nil {
			t.Fatal(err)
		}
		f.Cfg.Log, f.Cfg.Notices = nil, nil
		return f.Cfg
	}
	serveCfg, mcpCfg := parse("serve"), parse("mcp")
	if !reflect.DeepEqual(serveCfg, mcpCfg) {
		t.Errorf("serve and mcp configs differ:\n%+v\n%+v", serveCfg, mcpCfg)
	}
}
