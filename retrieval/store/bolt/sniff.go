package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/rerankd/rerankd/retrieval/store"
)

// notAStore refuses a file that is plainly something else: a bbolt file
// starts with a page header whose first eight bytes (the page id, 0) are
// zeros, so a file whose first bytes are NUL-free UTF-8 is text (a JSON
// calibration file, a config given to the wrong flag). Such a file is not
// damage: suggesting salvage for it would send the user the wrong way.
// A missing or unreadable file is left to bbolt, which says why.
func notAStore(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if n == 0 || (err != nil && !errors.Is(err, io.ErrUnexpectedEOF)) {
		return nil
	}
	head = head[:n]
	if bytes.IndexByte(head, 0) >= 0 {
		return nil
	}
	// A multi-byte character cut at the end of the window is still text.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	if !utf8.Valid(head) {
		return nil
	}
	return fmt.Errorf("open %s: %w: the file holds text, not a memory store (a bbolt database)", path, store.ErrIncompatible)
}
