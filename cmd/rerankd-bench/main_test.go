package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/convertcmd"
	"github.com/rerankd/rerankd/cmd/internal/servecmd"
	"github.com/rerankd/rerankd/internal/fixture"
)

// TestMain lets this test binary stand in for rerankd (serve, convert)
// when the lab starts it with RERANKD_TEST_AS_CLI=1 (rerankdExe).
func TestMain(m *testing.M) {
	if os.Getenv("RERANKD_TEST_AS_CLI") == "1" {
		os.Exit(rerankdStandIn().Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(fixture.Run(m)) // fixtures shared by this binary's tests (or the run's: scripts/gotest.sh)
}

// testModel returns the folder `rerankd-bench testmodel --out DIR args...`
// writes, written once per test run (internal/fixture) and shared by the
// tests asking for the same args: they only read it.
func testModel(t *testing.T, args ...string) string {
	t.Helper()
	return fixture.Dir(t, "lab-testmodel", args, func(dir string) error {
		if code, _, errs := runCLI(t, append([]string{"testmodel", "--out", dir}, args...)...); code != 0 {
			return fmt.Errorf("testmodel %v: exit %d: %s", args, code, errs)
		}
		return nil
	})
}

// convertedModel returns the folder `rerankd convert --from CKPT --out DIR
// args...` writes from testModel(ckptArgs...), shared the same way.
func convertedModel(t *testing.T, ckptArgs []string, args ...string) string {
	t.Helper()
	ckpt := testModel(t, ckptArgs...)
	return fixture.Dir(t, "lab-converted", [][]string{ckptArgs, args}, func(dir string) error {
		if code, _, errs := runCLI(t, append([]string{"convert", "--from", ckpt, "--out", dir}, args...)...); code != 0 {
			return fmt.Errorf("convert %v %v: exit %d: %s", ckptArgs, args, code, errs)
		}
		return nil
	})
}

// rerankdStandIn is the part of rerankd the lab's tests use.
func rerankdStandIn() cli.Program {
	return cli.Program{Name: "rerankd", Commands: []cli.Command{
		{Name: "serve", Run: servecmd.RunServe}, {Name: "convert", Run: convertcmd.Run}}}
}

// runCLI runs rerankd-bench with args in this process; "convert" runs
// rerankd's, which the tests use to prepare folders.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	p := program()
	if len(args) > 0 && args[0] == "convert" {
		p = rerankdStandIn()
	}
	code := p.Run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// cliCase is one command line and what it must do.
type cliCase struct {
	name string
	args []string
	code int      // 1: failure, 2: usage; 0: accepted
	want []string // substrings of stderr
}
