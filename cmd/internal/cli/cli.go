// Package cli is the one subcommand convention of rerankd's programs
// (rerankd, eval): a table of commands, one usage text, one mapping of
// errors to exit statuses and one handling of help.
//
//   - `PROG` alone: the usage text on stderr, exit 2.
//   - `PROG help [anything]`, `PROG -h`, `-help`, `--help`: the usage text
//     on stderr, exit 0. A command's own -h prints its flags, also on
//     stderr (the flag package's output), exit 0. stdout carries only what
//     a command produces.
//   - `PROG nope`: "PROG: unknown command "nope"" and the usage text on
//     stderr, exit 2; a command that moved to another program names its
//     new place instead, exit 2.
//   - A command's error: nil or flag.ErrHelp exit 0; wrapping ErrUsage
//     (a bad command line, also Usagef) "PROG CMD: error" on stderr, exit
//     2; an Exit error its status, the command having said why in more
//     than the one line Run would print (the flag package's message and
//     flag list, say); any other error "PROG CMD: error" on stderr, exit 1.
//     Commands return their errors and leave the printing to Run, so that
//     every program words them alike.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit statuses of every command.
const (
	ExitOK    = 0
	ExitFail  = 1 // the command failed: bad input file, failed write, ...
	ExitUsage = 2 // bad command line
)

// ErrUsage marks errors caused by how the command was called (exit 2).
var ErrUsage = errors.New("usage")

// Command is one subcommand. Run gets the arguments after its name.
type Command struct {
	Name, Summary string
	Run           func(args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// Program is a command line program made of subcommands.
type Program struct {
	Name     string // as the user types it: "rerankd", "eval"
	Commands []Command
	// Moved are commands that left this program: typed here they exit 2
	// with a message naming their new place.
	Moved []Moved
}

// Moved is a command that moved to another program.
type Moved struct {
	Name string // the old command
	To   string // what to type now: "rerankd-bench bench"
}

// Run dispatches args (without the program name) to a command and
// returns the exit status.
func (p Program) Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		p.Usage(stderr)
		return ExitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		p.Usage(stderr)
		return ExitOK
	}
	for _, c := range p.Commands {
		if c.Name == args[0] {
			return p.status(c.Name, c.Run(args[1:], stdin, stdout, stderr), stderr)
		}
	}
	for _, m := range p.Moved {
		if m.Name == args[0] {
			fmt.Fprintf(stderr, "%s: %s moved to the lab binary: run '%s' (make build writes bin/%s)\n", p.Name, m.Name, m.To, strings.Fields(m.To)[0])
			return ExitUsage
		}
	}
	fmt.Fprintf(stderr, "%s: unknown command %q\n", p.Name, args[0])
	p.Usage(stderr)
	return ExitUsage
}

// status maps a command's error to its exit status, saying why on stderr.
func (p Program) status(name string, err error, stderr io.Writer) int {
	var exit exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &exit):
		return exit.code
	case errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "%s %s: %v\n", p.Name, name, err)
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "%s %s: %v\n", p.Name, name, err)
		return ExitFail
	}
}

// Usage writes the program's usage text: its commands with their
// summaries.
func (p Program) Usage(w io.Writer) {
	width := 0
	for _, c := range p.Commands {
		width = max(width, len(c.Name))
	}
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", p.Name)
	for _, c := range p.Commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nrun '%s <command> -h' for a command's flags\n", p.Name)
}

// exitError is Exit's error.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Exit is the error of a command that has already said on stderr why it
// ends with status code: Run prints nothing more. Exit(ExitOK) is nil.
func Exit(code int) error {
	if code == ExitOK {
		return nil
	}
	return exitError{code}
}

// Usagef is a usage error (exit 2) that reads as its message alone,
// without ErrUsage's "usage: " in front: eval's usage messages have always
// read that way, and scripts match on them.
func Usagef(format string, a ...any) error {
	return usageError{fmt.Sprintf(format, a...)}
}

// usageError is Usagef's error.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == ErrUsage }

// ParseFlags parses a command's args into fs, with fs's messages (and -h's
// flag list) on stderr: a flag error or a positional argument is a usage
// error, -h is flag.ErrHelp (exit 0).
func ParseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	return nil
}
