package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
)

// TestProgressOnlyOnTerminal: eval locomo draws its progress bar when
// stderr is a terminal and writes none of it (no carriage returns, no bar
// label) to a pipe or a log.
func TestProgressOnlyOnTerminal(t *testing.T) {
	for _, p := range []string{"bm25", "bm25+recency"} { // the direct path and the memory service's
		var out, errb bytes.Buffer
		if code := run([]string{"locomo", "--data", fixtures, "--pipeline", p}, &out, &errb); code != exitOK {
			t.Fatalf("%s: exit %d: %s", p, code, errb.String())
		}
		if strings.Contains(errb.String(), "\r") || strings.Contains(errb.String(), p+" ") {
			t.Errorf("%s: progress written to a buffer: %q", p, errb.String())
		}

		var code int
		term := testenv.OnTerminal(t, func(tty *os.File) {
			out.Reset()
			code = run([]string{"locomo", "--data", fixtures, "--pipeline", p}, &out, tty)
		})
		if code != exitOK || !strings.Contains(term, p) || !strings.Contains(term, "/") {
			t.Errorf("%s: exit %d, terminal got %q: want the bar with its label and count", p, code, term)
		}
	}
}
