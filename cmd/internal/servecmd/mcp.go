package servecmd

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/serve"
)

// RunMCP implements rerankd mcp: it serves the memory and rerank tools over stdio: the App `rerankd
// serve` builds, from the same flags, without a listener. Stdout carries
// the protocol, so everything else (logs, the model notice) goes to
// stderr.
func RunMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	f := DefineFlags(fs)
	fs.StringVar(&f.Cfg.MCPNamespace, "namespace", app.DefaultMCPNamespace, "namespace of memory tools called without one")
	groups := append([]cli.FlagGroup{{Title: "MCP", Flags: []string{"namespace"}}}, Groups...)
	fs.Usage = cli.GroupedUsage(fs, "Usage: rerankd mcp [flags]\n\nAn MCP server over stdio with the tools memory_add, memory_search, memory_list, memory_get,\n"+
		"memory_update, memory_delete, memory_forget and rerank. It takes serve's flags; --addr, --api-key and --key-scopes do not apply (no listener; the\n"+
		"process's owner may use every namespace). 'rerankd serve' answers the same tools on /mcp.", groups, envHelp)
	log, err := Parse(fs, f, args, stderr)
	if err != nil {
		return err
	}
	f.Cfg.Server.APIKeys, f.Cfg.KeyScopesFile = nil, "" // no listener
	a, err := app.Build(f.Cfg)
	if err != nil {
		return err
	}
	defer func() { _ = a.Close(context.Background()) }()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("mcp serving on stdio", "backend", a.Backend.Name(), "memory", a.Memory != nil, "namespace", f.Cfg.MCPNamespace)
	err = a.MCP.Run(ctx, &serve.StdioTransport{In: stdin, Out: stdout, MaxLine: f.Cfg.Server.MaxBodyBytes, Drain: f.Cfg.Server.RequestTimeout + 5*time.Second})
	if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil // a signal, or the client closed stdin: a normal end
	}
	return err
}
