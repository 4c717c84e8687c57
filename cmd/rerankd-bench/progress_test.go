package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
)

// runOnTerminal runs rerankd-bench with stderr on a pseudo-terminal and
// returns what the terminal received.
func runOnTerminal(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var code int
	term := testenv.OnTerminal(t, func(tty *os.File) {
		var out bytes.Buffer
		code = run(args, strings.NewReader(""), &out, tty)
	})
	return code, term
}

// TestBenchProgressOnTerminal: bench draws its per-request bar on a
// terminal (TestBenchTiny checks a buffer gets none).
func TestBenchProgressOnTerminal(t *testing.T) {
	dir := writeTiny(t, "none")
	code, term := runOnTerminal(t, "bench", "--peak-time", smokePeak, "--model", dir, "--requests", "3", "--candidates", "2", "--served=false", "--ready-starts", "0")
	if code != 0 || !strings.Contains(term, "bench") || !strings.Contains(term, "3/3") {
		t.Errorf("exit %d, terminal got %q: want the bar with its label and count", code, term)
	}
}
