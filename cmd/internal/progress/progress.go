// Package progress draws progress bars for long CLI work (eval over many
// conversations, calibration, conversion, downloads, store checks) on
// stderr, and only when stderr is a terminal: a pipe, a file or a CI log
// gets no bar (and none of its carriage returns), only the command's own
// messages.
package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal: an open file (os.Stderr, say)
// on a tty.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// Bar is one progress bar; a nil or quiet Bar does nothing.
type Bar struct {
	b *progressbar.ProgressBar
}

// Unit says what a bar counts.
type Unit int

// Units.
const (
	Items Unit = iota // a count ("12/40")
	Bytes             // sizes ("1.2 GB/2.4 GB") and a rate
)

// New returns a bar of total steps, labelled desc, on w when w is a
// terminal; otherwise a quiet one. total < 0 means unknown.
func New(w io.Writer, total int64, desc string, unit Unit) *Bar {
	if !IsTerminal(w) {
		return &Bar{}
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionOnCompletion(func() { _, _ = fmt.Fprintln(w) }),
	}
	if unit == Bytes {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowCount())
	}
	return &Bar{b: progressbar.NewOptions64(total, opts...)}
}

// Add advances the bar by n steps.
func (b *Bar) Add(n int64) {
	if b != nil && b.b != nil {
		_ = b.b.Add64(n) // a drawing error only affects the bar
	}
}

// Set moves the bar to n steps done.
func (b *Bar) Set(n int64) {
	if b != nil && b.b != nil {
		_ = b.b.Set64(n)
	}
}

// Finish draws the bar complete and ends its line.
func (b *Bar) Finish() {
	if b != nil && b.b != nil {
		_ = b.b.Finish()
	}
}
