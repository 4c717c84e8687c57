package main

import (
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/cli"
)

// TestHelp: every lab command answers -h and --help with exit 0, and no
// help text quotes a measurement or turns a back-quoted word into a value
// name (cli.HelpProblems): the figures live in docs/perf.
func TestHelp(t *testing.T) {
	runs := [][]string{{"-h"}, {"--help"}}
	for _, c := range program().Commands {
		runs = append(runs, []string{c.Name, "-h"}, []string{c.Name, "--help"})
	}
	for _, args := range runs {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr %s", code, errs)
			}
			for _, p := range cli.HelpProblems(out + errs) {
				t.Error(p)
			}
		})
	}
}
