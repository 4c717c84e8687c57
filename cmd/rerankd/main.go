// Command rerankd decides which of an agent's memories matter for a query:
// `rerankd serve` answers POST /rerank with the cross-encoder (or the
// lexical scorer without a model) and, with its memory store, the memory
// API (POST /v1/memories, POST /v1/search: BM25 and vector retrieval, then
// the reranker). The other commands serve the same over MCP's stdio,
// score and convert models, tokenize and maintain the store; README.md
// and docs/user/ document them. The measurement tools are a separate
// binary, rerankd-bench.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/convertcmd"
	"github.com/rerankd/rerankd/cmd/internal/servecmd"
	"github.com/rerankd/rerankd/cmd/internal/version"
)

// errUsage marks errors caused by how the command was called (exit 2).
var errUsage = cli.ErrUsage

// labCommands moved to rerankd-bench: typed at rerankd they exit 2 naming
// the new place.
var labCommands = []string{"bench", "quant-check", "start-bench", "tune", "loadtest", "testmodel"}

func program() cli.Program {
	p := cli.Program{Name: "rerankd", Commands: []cli.Command{
		{Name: "serve", Summary: "serve the rerank HTTP API, the memory API and MCP on /mcp (the main job)", Run: servecmd.RunServe},
		{Name: "mcp", Summary: "serve the memory and rerank tools to an MCP client over stdio", Run: servecmd.RunMCP},
		{Name: "score", Summary: "score documents against a query with a model folder", Run: runScore},
		{Name: "convert", Summary: "convert a Hugging Face checkpoint (folder or hub repo) to a model folder", Run: convertcmd.Run},
		{Name: "store", Summary: "check the memory store, salvage a damaged file's valid records, or copy every memory between stores", Run: runStore},
		{Name: "tokenize", Summary: "encode JSON lines {\"text\": ...} to {\"ids\": [...]} with the Qwen3 tokenizer", Run: runTokenize},
		{Name: "version", Summary: "print the version (module version and VCS revision)", Run: runVersion},
	}}
	for _, name := range labCommands {
		p.Moved = append(p.Moved, cli.Moved{Name: name, To: "rerankd-bench " + name})
	}
	return p
}

// runVersion prints the version; other arguments are ignored, as they
// always were (docs/bad-input.md), except a request for help.
func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		fmt.Fprintln(stderr, "Usage: rerankd version\n\nPrints the module version and the VCS revision rerankd was built from.")
		return flag.ErrHelp
	}
	_, err := fmt.Fprintln(stdout, "rerankd", version.String())
	return err
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and maps its error to an exit code
// (cli.Program.Run: the convention eval shares).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return program().Run(args, stdin, stdout, stderr)
}
