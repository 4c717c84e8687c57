package main

import (
	"fmt"
	"io"
	"os"
)

// Exit statuses shared by every subcommand.
const (
	exitOK    = 0
	exitFail  = 1 // bad input file, failed write
	exitUsage = 2 // bad command line
)

// command is one subcommand. run gets the arguments after its name and
// returns the exit status.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is the dispatch table; add a subcommand by adding an entry.
var commands = []command{
	{"metrics", "score a TREC run against qrels (MAP, MRR, NDCG, P, Recall; trec_eval conventions)", runMetrics},
	{"locomo", "retrieval on LoCoMo conversations, scored against the evidence turns, per category", runLocomo},
	{"zh", "BM25 on the Chinese agent-memory test set (benchmarks/zh), per query tag, by CJK analysis (--cjk)", runZh},
	{"calibrate", "fit score calibration (Platt, isotonic) and a threshold, judged leave one conversation out; file + plots", runCalibrate},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "eval: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: eval <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'eval <command> -h' for a command's flags.")
}
