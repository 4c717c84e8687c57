// Command rerankd decides which of an agent's memories matter for a query:
// `rerankd serve` answers POST /rerank with the cross-encoder (or the
// lexical scorer without a model) and, with its memory store, the memory
// API (POST /v1/memories, POST /v1/search: BM25 and vector retrieval, then
// the reranker). The other commands convert, make and score models,
// tokenize, benchmark and maintain the store; README.md documents them.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/rerankd/rerankd/cmd/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// errUsage marks errors caused by how the command was called (exit 2).
var errUsage = cli.ErrUsage

func program() cli.Program {
	return cli.Program{Name: "rerankd", Commands: []cli.Command{
		{Name: "serve", Summary: "serve the rerank HTTP API (the main job)", Run: runServe},
		{Name: "mcp", Summary: "serve the memory and rerank tools to an MCP client over stdio (serve answers them on /mcp)", Run: runMCP},
		{Name: "tokenize", Summary: "encode JSON lines {\"text\": ...} to {\"ids\": [...]} with the Qwen3 tokenizer", Run: runTokenize},
		{Name: "score", Summary: "score documents against a query with a model folder", Run: runScore},
		{Name: "testmodel", Summary: "write a model folder with seeded random weights (tests, speed work)", Run: runTestModel},
		{Name: "loadtest", Summary: "drive an in-process server over loopback: throughput, latency, overhead, overload", Run: runLoadtest},
		{Name: "bench", Summary: "measure scoring speed against a one-pair-per-call baseline and the machine's MatMul peak", Run: runBench},
		{Name: "quant-check", Summary: "every quantised variant of a model folder against its float32 on your texts: logit/score error, ranking agreement, speed", Run: runQuantCheck},
		{Name: "start-bench", Summary: "time starts of serve to ready with the model's files dropped from the page cache (first) and right after (repeat), per start variant", Run: runStartBench},
		{Name: "tune", Summary: "compare ONNX Runtime thread, spinning and session layouts on one model, same run", Run: runTune},
		{Name: "convert", Summary: "convert a Hugging Face checkpoint (folder or hub repo) to a model folder", Run: runConvert},
		{Name: "store", Summary: "check the memory store (file or postgres:// URL), salvage a damaged file's valid records, or copy every memory between stores", Run: runStore},
		{Name: "version", Summary: "print the version", Run: func(_ []string, _ io.Reader, stdout, _ io.Writer) error {
			_, err := fmt.Fprintln(stdout, "rerankd", version)
			return err
		}},
	}}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and maps its error to an exit code
// (cli.Program.Run: the convention eval shares).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return program().Run(args, stdin, stdout, stderr)
}
