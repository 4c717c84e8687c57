package main

import (
	"errors"
	"flag"
	"io"
	"os"

	"github.com/rerankd/rerankd/cmd/internal/cli"
)

// Exit statuses shared by every subcommand (cli's).
const (
	exitOK    = cli.ExitOK
	exitFail  = cli.ExitFail  // bad input file, failed write
	exitUsage = cli.ExitUsage // bad command line
)

// program is the dispatch table; add a subcommand by adding an entry.
// Commands return their errors and cli prints them, as rerankd's do; a
// command prints its own only when it says more than one line (cli.Exit).
func program() cli.Program {
	return cli.Program{Name: "eval", Commands: []cli.Command{
		{Name: "metrics", Summary: "score a TREC run against qrels (MAP, MRR, NDCG, P, Recall; trec_eval conventions)", Run: runMetrics},
		{Name: "locomo", Summary: "retrieval on LoCoMo conversations, scored against the evidence turns, per category", Run: runLocomo},
		{Name: "zh", Summary: "BM25 on the Chinese agent-memory test set (benchmarks/zh), per query tag, by CJK analysis (--cjk)", Run: runZh},
		{Name: "compare", Summary: "compare runs of `eval locomo --run`: metrics per run and category, paired tests against the first, a PNG chart", Run: runCompare},
		{Name: "calibrate", Summary: "fit score calibration (Platt, isotonic) and a threshold, judged leave one conversation out; file + plots", Run: runCalibrate},
	}}
}

// parseError is a command's answer to its flag set's Parse error: -h is
// help (exit 0); any other error the flag package has already printed,
// with the flag list, so only the status is left to give.
func parseError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return cli.Exit(exitUsage)
}

func main() {
	os.Exit(program().Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args as main does, with no stdin (no eval command reads
// it).
func run(args []string, stdout, stderr io.Writer) int {
	return program().Run(args, nil, stdout, stderr)
}
