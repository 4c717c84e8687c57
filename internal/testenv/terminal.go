package testenv

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
)

// OnTerminal calls run with a pseudo-terminal for it to write to (as a
// command's stderr) and returns everything the terminal received. Without
// /dev/ptmx the test is skipped, except in CI.
func OnTerminal(t testing.TB, run func(tty *os.File)) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		SkipUnlessCI(t, "no pseudo-terminal here: "+err.Error(), "the drawing side needs /dev/ptmx")
	}
	got := make(chan string)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		_ = ptmx.SetReadDeadline(time.Now().Add(time.Minute))
		for {
			n, err := ptmx.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				got <- b.String()
				return
			}
		}
	}()
	run(tty)
	_ = tty.Close()
	out := <-got
	_ = ptmx.Close()
	return out
}
