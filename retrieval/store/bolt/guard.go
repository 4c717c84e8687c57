package bolt

import (
	"fmt"
	"runtime/debug"

	"github.com/rerankd/rerankd/retrieval/store"
)

// guarded runs fn, turning what a damaged file makes bbolt do into an
// error wrapping store.ErrCorrupt: its "page expected to be ..." and
// index-out-of-range panics, and faults from reading a mapped page at an
// offset a damaged page header names. bbolt rolls its transaction back on
// a panic, so the store stays usable.
func guarded(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &damageError{cause: r}
		}
	}()
	return fn()
}

// damageError is a panic or fault recovered while reading the file.
type damageError struct{ cause any }

func (e *damageError) Error() string {
	return fmt.Sprintf("%v: damaged page (%v): run `rerankd store check`, then `rerankd store salvage`, or restore a backup", store.ErrCorrupt, e.cause)
}

func (e *damageError) Unwrap() error { return store.ErrCorrupt }
