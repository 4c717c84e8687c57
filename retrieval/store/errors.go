package store

import (
	"errors"

	"github.com/rerankd/rerankd/retrieval/memory"
)

var (
	// ErrNotFound is returned (wrapped) when a memory or vector does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid is returned (wrapped) when an argument fails validation. It is
	// the same value as memory.ErrInvalid, so errors.Is works with either.
	ErrInvalid = memory.ErrInvalid
	// ErrCorrupt is returned (wrapped) when a stored record fails to decode.
	ErrCorrupt = errors.New("corrupt record")
	// ErrClosed is returned when the Store has been closed.
	ErrClosed = errors.New("store closed")
	// ErrIncompatible is returned by Open when the file was written by a newer,
	// incompatible store format.
	ErrIncompatible = errors.New("incompatible store format")
)
