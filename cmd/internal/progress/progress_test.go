package progress

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/rerankd/rerankd/internal/testenv"
)

// TestQuietWhenNotATerminal: a buffer, a pipe and a regular file get no
// bar.
func TestQuietWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pr.Close() }()
	file, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]io.Writer{"buffer": &buf, "pipe": pw, "file": file} {
		if IsTerminal(w) {
			t.Errorf("%s taken for a terminal", name)
		}
		b := New(w, 10, "work", Items)
		b.Add(3)
		b.Set(10)
		b.Finish()
	}
	_ = pw.Close()
	piped, _ := io.ReadAll(pr)
	written, _ := os.ReadFile(file.Name())
	if buf.Len() != 0 || len(piped) != 0 || len(written) != 0 {
		t.Errorf("output when not a terminal: buffer %q, pipe %q, file %q", buf.String(), piped, written)
	}
	var nilBar *Bar
	nilBar.Add(1) // a nil bar is quiet too
	nilBar.Finish()
}

// TestDrawsOnATerminal: on a pseudo-terminal the bar shows its label and
// count, and ends its line.
func TestDrawsOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		testenv.SkipUnlessCI(t, "no pseudo-terminal here: "+err.Error(), "the drawing side needs /dev/ptmx") // the quiet side is still tested
	}
	defer func() { _ = ptmx.Close() }()
	if !IsTerminal(tty) {
		t.Fatal("a pty is not taken for a terminal")
	}
	b := New(tty, 4, "conversations", Items)
	for range 4 {
		b.Add(1)
	}
	b.Finish()
	_ = tty.Close()
	out := readAll(t, ptmx)
	if !strings.Contains(out, "conversations") || !strings.Contains(out, "4/4") || !strings.Contains(out, "\n") {
		t.Errorf("terminal output %q lacks the label, 4/4 or the final newline", out)
	}
}

// readAll reads what the pty master holds; it reports EIO once the slave
// side is closed, which ends the read.
func readAll(t *testing.T, f *os.File) string {
	t.Helper()
	var out bytes.Buffer
	_ = f.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.String()
		}
	}
}
