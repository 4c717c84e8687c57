package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/cmd/internal/cli"
)

func runMetrics(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval metrics", flag.ContinueOnError)
	fs.SetOutput(stderr)
	qrelsPath := fs.String("qrels", "", "TREC qrels `file`: qid iter docid rel (required)")
	runPath := fs.String("run", "", "TREC run `file`: qid Q0 docid rank score tag (required)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a markdown table")
	perQuery := fs.Bool("per-query", false, "add per-query scores (with --json: one JSON object per line after the summary)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: eval metrics --qrels FILE --run FILE [--json] [--per-query]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	// These print the usage text after the message, more than the
	// dispatcher's one line, so they are printed here.
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "eval metrics: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cli.Exit(exitUsage)
	case *qrelsPath == "" || *runPath == "":
		fmt.Fprintln(stderr, "eval metrics: --qrels and --run are required")
		fs.Usage()
		return cli.Exit(exitUsage)
	}

	qrels, err := readFile(*qrelsPath, metrics.ReadQrels)
	if err != nil {
		return err
	}
	run, err := readFile(*runPath, metrics.ReadRun)
	if err != nil {
		return err
	}
	sum, per, err := metrics.Evaluate(qrels, run)
	if err != nil {
		return fmt.Errorf("%s: %w", *qrelsPath, err)
	}

	bw := bufio.NewWriter(stdout)
	if *asJSON {
		err = writeJSON(bw, sum, per, *perQuery)
	} else {
		writeMarkdown(bw, sum, per, *perQuery)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// readFile opens path and parses it with read, turning a parse error into
// "FILE:LINE: reason".
func readFile[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	v, err := read(f)
	if pe, ok := errors.AsType[*metrics.ParseError](err); ok {
		return zero, fmt.Errorf("%s:%d: %s", path, pe.Line, pe.Msg)
	}
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

func writeJSON(w io.Writer, sum metrics.Summary, per []metrics.PerQuery, perQuery bool) error {
	enc := json.NewEncoder(w) // one compact object per line
	if err := enc.Encode(sum); err != nil {
		return err
	}
	if !perQuery {
		return nil
	}
	for _, p := range per {
		if err := enc.Encode(p); err != nil {
			return err
		}
	}
	return nil
}

func writeMarkdown(w io.Writer, sum metrics.Summary, per []metrics.PerQuery, perQuery bool) {
	names := metrics.MetricNames()
	fmt.Fprintln(w, "| metric | value |")
	fmt.Fprintln(w, "| --- | ---: |")
	for i, v := range sum.Values() {
		fmt.Fprintf(w, "| %s | %.4f |\n", names[i], v)
	}
	fmt.Fprintf(w, "| %s | %d |\n", metrics.QueriesKey, sum.Queries)
	if !perQuery {
		return
	}
	fmt.Fprintf(w, "\n| qid | %s |\n", strings.Join(names, " | "))
	fmt.Fprintf(w, "| --- |%s\n", strings.Repeat(" ---: |", len(names)))
	for _, p := range per {
		fmt.Fprintf(w, "| %s |", strings.ReplaceAll(p.QID, "|", `\|`))
		for _, v := range p.Values() {
			fmt.Fprintf(w, " %.4f |", v)
		}
		fmt.Fprintln(w)
	}
}
