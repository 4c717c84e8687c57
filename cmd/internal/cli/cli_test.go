package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

func testProgram() Program {
	return Program{Name: "prog", Commands: []Command{
		{Name: "ok", Summary: "prints ok", Run: func(_ []string, _ io.Reader, stdout, _ io.Writer) error {
			_, err := fmt.Fprintln(stdout, "ok")
			return err
		}},
		{Name: "flags", Summary: "parses --n", Run: func(args []string, _ io.Reader, _, stderr io.Writer) error {
			fs := flag.NewFlagSet("flags", flag.ContinueOnError)
			n := fs.Int("n", 1, "a number")
			if err := ParseFlags(fs, args, stderr); err != nil {
				return err
			}
			if *n < 1 {
				return fmt.Errorf("%w: --n %d: want >= 1", ErrUsage, *n)
			}
			return nil
		}},
		{Name: "fail", Summary: "fails", Run: func([]string, io.Reader, io.Writer, io.Writer) error {
			return errors.New("disk full")
		}},
		{Name: "reported", Summary: "reports its own failure", Run: func(args []string, _ io.Reader, _, stderr io.Writer) error {
			if len(args) > 0 {
				fmt.Fprintln(stderr, "prog reported: said why")
				return Exit(ExitUsage)
			}
			return nil
		}},
		{Name: "usagef", Summary: "a usage error without the prefix", Run: func([]string, io.Reader, io.Writer, io.Writer) error {
			return Usagef("--n %d: want >= 1", 0)
		}},
	}}
}

// TestRun: the one convention's exit statuses and where each text goes.
func TestRun(t *testing.T) {
	for _, c := range []struct {
		args       []string
		code       int
		out, inErr string
	}{
		{nil, ExitUsage, "", "usage: prog <command>"},
		{[]string{"help"}, ExitOK, "", "usage: prog <command>"},
		{[]string{"help", "zz"}, ExitOK, "", "usage: prog <command>"},
		{[]string{"-h"}, ExitOK, "", "usage: prog <command>"},
		{[]string{"-help"}, ExitOK, "", "usage: prog <command>"},
		{[]string{"--help"}, ExitOK, "", "usage: prog <command>"},
		{[]string{"nope"}, ExitUsage, "", `prog: unknown command "nope"`},
		{[]string{"--n", "3"}, ExitUsage, "", "unknown command"},
		{[]string{"ok"}, ExitOK, "ok\n", ""},
		{[]string{"flags", "-h"}, ExitOK, "", "-n int"},
		{[]string{"flags", "--n", "0"}, ExitUsage, "", "prog flags: usage: --n 0"},
		{[]string{"flags", "--m"}, ExitUsage, "", "prog flags: usage: flag provided but not defined: -m"},
		{[]string{"flags", "extra"}, ExitUsage, "", `prog flags: usage: unexpected argument "extra"`},
		{[]string{"fail"}, ExitFail, "", "prog fail: disk full"},
		{[]string{"reported"}, ExitOK, "", ""},
		{[]string{"reported", "x"}, ExitUsage, "", "prog reported: said why\n"},
		{[]string{"usagef"}, ExitUsage, "", "prog usagef: --n 0: want >= 1\n"},
	} {
		var out, errb bytes.Buffer
		code := testProgram().Run(c.args, strings.NewReader(""), &out, &errb)
		if code != c.code || out.String() != c.out || !strings.Contains(errb.String(), c.inErr) || c.inErr == "" && errb.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, stderr with %q", c.args, code, out.String(), errb.String(), c.code, c.out, c.inErr)
		}
	}
	// A reported failure is not reported twice.
	var errb bytes.Buffer
	testProgram().Run([]string{"reported", "x"}, nil, io.Discard, &errb)
	if strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("stderr %q: want the command's one line", errb.String())
	}
}

// TestUsage: every command with its summary, names in one column.
func TestUsage(t *testing.T) {
	var b bytes.Buffer
	testProgram().Usage(&b)
	want := "usage: prog <command> [flags]\n\ncommands:\n" +
		"  ok        prints ok\n" +
		"  flags     parses --n\n" +
		"  fail      fails\n" +
		"  reported  reports its own failure\n" +
		"  usagef    a usage error without the prefix\n" +
		"\nrun 'prog <command> -h' for a command's flags\n"
	if b.String() != want {
		t.Errorf("usage:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestExit(t *testing.T) {
	if Exit(ExitOK) != nil {
		t.Error("Exit(0) is an error")
	}
	if err := Exit(ExitFail); err == nil || err.Error() != "exit status 1" {
		t.Errorf("Exit(1) = %v", err)
	}
}
