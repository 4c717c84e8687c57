package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/serve"
)

// defaultMCPNamespace is where memory tools called without a namespace go
// (rerankd mcp's --namespace default; always on serve's /mcp).
const defaultMCPNamespace = "default"

// runMCP serves the memory and rerank tools over stdio: the composition
// `rerankd serve` builds, from the same flags, without a listener. Stdout
// carries the protocol, so everything else (logs, the model notice) goes to
// stderr.
func runMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	f := defineServeFlags(fs)
	ns := fs.String("namespace", defaultMCPNamespace, "namespace of memory tools called without one")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: rerankd mcp [flags]\n\nAn MCP server over stdio with the tools memory_add, memory_search, memory_list, memory_delete\n"+
			"and rerank. It takes serve's flags; --addr, --api-key and --key-scopes do not apply (no listener; the\n"+
			"process's owner may use every namespace). `rerankd serve` answers the same tools on /mcp.")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), serveEnvHelp)
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := applyEnv(fs); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	f.ortLib = f.dev.ORTLib(f.ortLib)
	if err := memory.ValidateNamespace(*ns); err != nil {
		return fmt.Errorf("%w: --namespace: %w", errUsage, err)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %w", errUsage, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	f.server.Version = version
	if err := errors.Join(f.server.Validate(), f.sched.Validate()); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	comp, err := composeServer(f, serve.NewMetrics(), log, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = comp.backend.Close(context.Background()) }()
	f.memory.ortLib, f.memory.tokenizer, f.memory.threads = f.ortLib, f.tok, f.threads
	mem, closeMem, err := openMemory(f.memory, log, stderr)
	if err != nil {
		return err
	}
	defer closeMem()
	if mem != nil {
		comp.srv.WithMemory(mem)
	}
	ms, err := comp.srv.NewMCP(serve.MCPOptions{Namespace: *ns, Version: version})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("mcp serving on stdio", "backend", comp.backend.Name(), "memory", mem != nil, "namespace", *ns)
	err = ms.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil // a signal, or the client closed stdin: a normal end
	}
	return err
}

// nopWriteCloser leaves stdout open when the session ends.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
