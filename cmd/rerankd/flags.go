package main

import (
	"flag"
	"io"
	"strings"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/paths"
)

// stringList is a repeatable string flag (--doc a --doc b).
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseFlags parses args and turns flag errors into usage errors (exit 2).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	return cli.ParseFlags(fs, args, stderr)
}

// defaultORTLib is $ORT_LIB or the library scripts/setup.sh installs.
func defaultORTLib() string { return paths.ORTLib() }
