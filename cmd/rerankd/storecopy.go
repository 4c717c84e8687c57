package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/retrieval/store"
)

// copyReport is what `store copy` did, and what the target's check found.
type copyReport struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Namespaces int    `json:"namespaces"`
	// Copied counts memories written to the target; Same those already
	// there with the same text, fields and vector (a resumed copy skips
	// them).
	Copied int `json:"copied"`
	Same   int `json:"same"`
	// Extra counts memories of the target that the source lacks (left
	// alone: a copy never deletes).
	Extra int       `json:"extra"`
	Check checkJSON `json:"check"`
	// Problems lists what the target's check found.
	Problems []string `json:"problems"`
}

// runStoreCopy implements `rerankd store copy --from A --to B`: every
// memory of every namespace, with its vector, page by page. It is
// resumable: a record the target already holds unchanged is not written
// again, so running it again after an interruption finishes the job. The
// target is checked at the end (store check), and the per-namespace
// counts are compared.
func runStoreCopy(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("store copy", flag.ContinueOnError)
	from := fs.String("from", "", "source store: a bbolt file or a postgres:// URL (stop writers first)")
	to := fs.String("to", "", "target store: a bbolt file (created if missing) or a postgres:// URL")
	batch := fs.Int("batch", 500, "memories per write transaction")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	switch {
	case *from == "" || *to == "":
		return fmt.Errorf("%w: --from and --to are required", errUsage)
	case *from == *to:
		return fmt.Errorf("%w: --from and --to are the same store", errUsage)
	case *batch < 1 || *batch > store.MaxPage:
		return fmt.Errorf("%w: --batch %d must be in 1..%d", errUsage, *batch, store.MaxPage)
	}
	// Both values are read before either store is opened: a usage error
	// must not wait on a database or a file lock.
	fromLoc, err := app.ParseStoreLocation("--from", *from)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	toLoc, err := app.ParseStoreLocation("--to", *to)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case fromLoc.Kind == app.StoreNone || toLoc.Kind == app.StoreNone:
		return fmt.Errorf("%w: --from none or --to none names no store; %s", errUsage, app.StoreForms)
	case fromLoc.Kind == app.StoreFile && toLoc.Kind == app.StoreFile && sameFile(*from, *to):
		return fmt.Errorf("%w: --from and --to are the same store file", errUsage)
	}
	src, srcName, err := app.OpenStoreReadOnly("--from", *from)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer func() { _ = src.Close() }()
	dst, dstName, err := app.OpenStore("--to", *to, 0, nil)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer func() { _ = dst.Close() }()
	if err := app.PingNow(dst); err != nil {
		return fmt.Errorf("--to %s: %w", dstName, err)
	}

	rep := copyReport{From: srcName, To: dstName, Problems: []string{}}
	names, err := src.Namespaces()
	if err != nil {
		return fmt.Errorf("--from %s: %w", srcName, err)
	}
	counts := make(map[string]int, len(names))
	var total int64
	for _, ns := range names {
		n, err := src.Count(ns)
		if err != nil {
			return fmt.Errorf("--from %s: %w", srcName, err)
		}
		counts[ns] = n
		total += int64(n)
	}
	rep.Namespaces = len(names)
	// An interrupt stops between pages, so every page written is whole
	// and the line that says how to finish is printed (the default
	// handler would exit 130 with none).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bar := progress.New(stderr, total, "store copy", progress.Items)
	for _, ns := range names {
		if err := copyNamespace(ctx, src, dst, ns, *batch, &rep, bar); err != nil {
			return copyFailed(ns, err, &rep)
		}
	}
	bar.Finish()

	// Verify: the target's own check, and every namespace's count.
	check, err := dst.CheckProgress(func(p store.Problem) { rep.Problems = append(rep.Problems, p.String()) }, nil)
	rep.Check = checkView(check)
	if err != nil {
		return fmt.Errorf("--to %s: check: %w", dstName, err)
	}
	for _, ns := range slices.Sorted(maps.Keys(counts)) {
		n, err := dst.Count(ns)
		if err != nil {
			return fmt.Errorf("--to %s: %w", dstName, err)
		}
		if n < counts[ns] {
			rep.Problems = append(rep.Problems, fmt.Sprintf("namespace %s: the target has %d memories, the source %d", ns, n, counts[ns]))
		}
		rep.Extra += n - counts[ns]
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintln(stdout, p)
		}
		fmt.Fprintf(stdout, "copied %d memories of %d namespaces from %s to %s (%d already there unchanged, %d in the target only); target check: %d memories, %d vectors, %d problems\n",
			rep.Copied, rep.Namespaces, srcName, dstName, rep.Same, rep.Extra, rep.Check.Memories, rep.Check.Vectors, rep.Check.Problems)
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("store copy: the target does not hold the source's memories (%d problems, listed above)", len(rep.Problems))
	}
	return nil
}

// copyNamespace copies ns page by page, writing only the records the
// target lacks or holds differently.
func copyNamespace(ctx context.Context, src, dst store.Backend, ns string, batch int, rep *copyReport, bar *progress.Bar) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for pg, err := range store.Pages(src, ns, batch, true) {
		if err != nil {
			return fmt.Errorf("reading the source: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		recs := pg.Records
		ids := make([]string, len(recs))
		for i, r := range recs {
			ids[i] = r.Memory.ID
		}
		have, err := dst.GetMany(ns, ids, true)
		if err != nil {
			return fmt.Errorf("reading the target: %w", err)
		}
		held := make(map[string]store.Record, len(have))
		for _, r := range have {
			held[r.Memory.ID] = r
		}
		var items []store.Item
		for _, r := range recs {
			if old, ok := held[r.Memory.ID]; ok && sameRecord(old, r) {
				rep.Same++
				continue
			}
			items = append(items, store.Item(r))
		}
		if err := dst.PutBatch(items); err != nil {
			return fmt.Errorf("writing the target: %w", err)
		}
		rep.Copied += len(items)
		bar.Add(int64(len(recs)))
	}
	return nil
}

// sameRecord reports whether two records hold the same memory and vector.
func sameRecord(a, b store.Record) bool {
	ma, mb := a.Memory.Normalize(), b.Memory.Normalize()
	return ma.ID == mb.ID && ma.Namespace == mb.Namespace && ma.Text == mb.Text &&
		ma.Time.Equal(mb.Time) && ma.Source == mb.Source && maps.Equal(ma.Metadata, mb.Metadata) &&
		ma.SchemaVersion == mb.SchemaVersion && slices.Equal(a.Vector, b.Vector)
}

// sameFile reports whether two paths name one file: the same path once
// cleaned, or (both existing) the same inode, so that a copy onto its own
// source is refused instead of failing on the lock it holds itself.
func sameFile(a, b string) bool {
	if absA, err := filepath.Abs(a); err == nil {
		if absB, err := filepath.Abs(b); err == nil && absA == absB {
			return true
		}
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// copyFailed says how far a copy got and that running it again resumes it
// (records already in the target unchanged are skipped).
func copyFailed(ns string, err error, rep *copyReport) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("store copy: interrupted in namespace %q after %d memories written (%d already there); the target holds whole pages only: run the same command again to resume", ns, rep.Copied, rep.Same)
	}
	return fmt.Errorf("store copy: namespace %q: %w (run the same command again to resume)", ns, err)
}
