package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// storeUsage is store's help: its subcommands.
const storeUsage = `Usage: rerankd store <check|salvage|copy> [flags]

  check    check every record of the memory store (a bbolt file or a postgres:// URL)
  salvage  write a damaged file's valid records to a new file
  copy     copy every memory from one store to another (file or postgres://, either way)

Stop the server before check or salvage of a file: it holds the file lock.
Run 'rerankd store <subcommand> -h' for its flags.
`

// runStore implements `rerankd store check|salvage|copy`: tools for the
// memory store (a bbolt file: stop the server first, it holds the file
// lock; or a postgres:// URL).
func runStore(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: want 'store check --store FILE_OR_URL', 'store salvage --store FILE --out NEW' or 'store copy --from FILE_OR_URL --to FILE_OR_URL'", errUsage)
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, storeUsage)
		return flag.ErrHelp
	}
	if sub == "copy" {
		return runStoreCopy(args, stdout, stderr)
	}
	fs := flag.NewFlagSet("store "+sub, flag.ContinueOnError)
	path := fs.String("store", app.DefaultStorePath(), "memory store: a bbolt file or a postgres:// URL")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var out *string
	switch sub {
	case "check":
	case "salvage":
		out = fs.String("out", "", "new store file to write the valid records to (required; must not exist)")
	default:
		return fmt.Errorf("%w: unknown store command %q (want check, salvage or copy)", errUsage, sub)
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	type report struct {
		Store    string       `json:"store"`
		Check    *checkJSON   `json:"check,omitempty"`
		Salvage  *salvageJSON `json:"salvage,omitempty"`
		Problems []string     `json:"problems"`
	}
	rep := report{Store: *path, Problems: []string{}}
	collect := func(p store.Problem) { rep.Problems = append(rep.Problems, p.String()) }
	switch sub {
	case "check":
		s, name, err := app.OpenStoreReadOnly("--store", *path)
		if err != nil {
			return err
		}
		rep.Store, *path = name, name
		var bar *progress.Bar
		st, err := s.CheckProgress(collect, func(done, total int64) {
			if bar == nil && total > 0 {
				bar = progress.New(stderr, total, "store check", progress.Items)
			}
			bar.Set(done) // the last call, done == total, completes the bar
		})
		_ = s.Close()
		if err != nil {
			return err
		}
		c := checkView(st)
		rep.Check = &c
	case "salvage":
		if *out == "" {
			return fmt.Errorf("%w: --out is required", errUsage)
		}
		for _, f := range []struct{ flag, v string }{{"--store", *path}, {"--out", *out}} {
			loc, err := app.ParseStoreLocation(f.flag, f.v)
			if err != nil {
				return fmt.Errorf("%w: %w", errUsage, err)
			}
			if loc.Kind != app.StoreFile {
				return fmt.Errorf("%w: %s: salvage reads a damaged bbolt file into a new one; a PostgreSQL database is repaired with PostgreSQL's own tools (then `rerankd store check`)", errUsage, f.flag)
			}
		}
		var bar *progress.Bar
		st, err := bolt.SalvageProgress(*path, *out, collect, func(done, total int64) {
			if bar == nil {
				bar = progress.New(stderr, total, "store salvage", progress.Items)
			}
			bar.Set(done)
			if done == total {
				bar.Finish()
			}
		})
		if err != nil {
			return err
		}
		v := salvageView(st)
		rep.Salvage = &v
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintln(stdout, p)
		}
		if rep.Check != nil {
			c := rep.Check
			fmt.Fprintf(stdout, "%s: %d namespaces, %d memories, %d vectors, %d problems\n", *path, c.Namespaces, c.Memories, c.Vectors, c.Problems)
		}
		if rep.Salvage != nil {
			v := rep.Salvage
			fmt.Fprintf(stdout, "salvaged %d memories (%d with vectors, %d read from pages bbolt could not reach) into %s; %d damaged records or pages left behind (listed above)\n",
				v.Copied, v.Vectors, v.FromPages, *out, v.Skipped)
		}
	}
	if sub == "check" && rep.Check.Problems > 0 {
		return errors.New("problems found: stop rerankd and run `rerankd store salvage --store FILE --out NEW`, then serve NEW")
	}
	return nil
}
