package main

import (
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

// program is the dispatch table; add a subcommand by adding an entry. Each
// command reports its own errors on stderr and returns its exit status
// (cli.Reported); dispatch, usage text and help are cli's, as rerankd's.
func program() cli.Program {
	return cli.Program{Name: "eval", Commands: []cli.Command{
		{Name: "metrics", Summary: "score a TREC run against qrels (MAP, MRR, NDCG, P, Recall; trec_eval conventions)", Run: cli.Reported(runMetrics)},
		{Name: "locomo", Summary: "retrieval on LoCoMo conversations, scored against the evidence turns, per category", Run: cli.Reported(runLocomo)},
		{Name: "zh", Summary: "BM25 on the Chinese agent-memory test set (benchmarks/zh), per query tag, by CJK analysis (--cjk)", Run: cli.Reported(runZh)},
		{Name: "calibrate", Summary: "fit score calibration (Platt, isotonic) and a threshold, judged leave one conversation out; file + plots", Run: cli.Reported(runCalibrate)},
	}}
}

func main() {
	os.Exit(program().Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args as main does, with no stdin (no eval command reads
// it).
func run(args []string, stdout, stderr io.Writer) int {
	return program().Run(args, nil, stdout, stderr)
}
