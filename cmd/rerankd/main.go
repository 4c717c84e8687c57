// Command rerankd decides which of an agent's memories matter for a query:
// `rerankd serve` answers POST /rerank with the cross-encoder (or the
// lexical scorer without a model) and, with its memory store, the memory
// API (POST /v1/memories, POST /v1/search: BM25 and vector retrieval, then
// the reranker). The other commands convert, make and score models,
// tokenize, benchmark and maintain the store; README.md documents them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// errUsage marks errors caused by how the command was called (exit 2).
var errUsage = errors.New("usage")

type command struct {
	name, summary string
	run           func(args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "serve the rerank HTTP API (the main job)", runServe},
		{"tokenize", "encode JSON lines {\"text\": ...} to {\"ids\": [...]} with the Qwen3 tokenizer", runTokenize},
		{"score", "score documents against a query with a model folder", runScore},
		{"testmodel", "write a model folder with seeded random weights (tests, speed work)", runTestModel},
		{"loadtest", "drive an in-process server over loopback: throughput, latency, overhead, overload", runLoadtest},
		{"bench", "measure scoring speed against a one-pair-per-call baseline and the machine's MatMul peak", runBench},
		{"tune", "compare ONNX Runtime thread, spinning and session layouts on one model, same run", runTune},
		{"convert", "convert a Hugging Face checkpoint (folder or hub repo) to a model folder", runConvert},
		{"store", "check the memory store (file or postgres:// URL), salvage a damaged file's valid records, or copy every memory between stores", runStore},
		{"version", "print the version", func(_ []string, _ io.Reader, stdout, _ io.Writer) error {
			_, err := fmt.Fprintln(stdout, "rerankd", version)
			return err
		}},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and maps its error to an exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdin, stdout, stderr)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				fmt.Fprintf(stderr, "rerankd %s: %v\n", c.name, err)
				return 2
			default:
				fmt.Fprintf(stderr, "rerankd %s: %v\n", c.name, err)
				return 1
			}
		}
	}
	fmt.Fprintf(stderr, "rerankd: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: rerankd <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nrun 'rerankd <command> -h' for a command's flags")
}
