// Command rerankd-bench is rerankd's lab: the tools that measured the
// engine's defaults (scoring speed, quantisation error, start-up, thread
// layouts, load and soak) and write the random-weight models its tests and
// speed work use. It builds its servers with the same composition root as
// `rerankd serve` (cmd/internal/app), so what it measures is what serve
// runs. README.md beside this file documents each command; the figures it
// produced are in docs/perf/ with the commands that made them.
package main

import (
	"flag"
	"io"
	"os"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/cmd/internal/testmodel"
	"github.com/rerankd/rerankd/cmd/internal/version"
)

// errUsage marks errors caused by how the command was called (exit 2).
var errUsage = cli.ErrUsage

// labCommands are rerankd-bench's commands; cmd/rerankd names them when
// one is typed at rerankd.
func program() cli.Program {
	return cli.Program{Name: "rerankd-bench", Commands: []cli.Command{
		{Name: "bench", Summary: "measure scoring speed against a one-pair-per-call baseline and the machine's MatMul peak", Run: runBench},
		{Name: "quant-check", Summary: "every quantised variant of a model folder against its float32 on your texts: logit/score error, ranking agreement, speed", Run: runQuantCheck},
		{Name: "start-bench", Summary: "time starts of serve to ready, with the model's files dropped from the page cache (first) and right after (repeat), per start variant", Run: runStartBench},
		{Name: "tune", Summary: "compare ONNX Runtime thread, spinning and session layouts on one model, same run", Run: runTune},
		{Name: "loadtest", Summary: "drive an in-process server over loopback: throughput, latency, overhead, overload (--hold: soak)", Run: runLoadtest},
		{Name: "testmodel", Summary: "write a model folder with seeded random weights (tests, speed work)", Run: testmodel.Run},
		{Name: "version", Summary: "print the version", Run: func(_ []string, _ io.Reader, stdout, _ io.Writer) error {
			_, err := io.WriteString(stdout, "rerankd-bench "+version.String()+"\n")
			return err
		}},
	}}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a command and maps its error to an exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return program().Run(args, stdin, stdout, stderr)
}

// parseFlags parses args and turns flag errors into usage errors (exit 2).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	return cli.ParseFlags(fs, args, stderr)
}

// defaultORTLib, defaultTokenizer: see cmd/internal/paths.
func defaultORTLib() string    { return paths.ORTLib() }
func defaultTokenizer() string { return paths.Tokenizer() }
