package keep

import (
	"errors"
	"fmt"

	"github.com/rerankd/rerankd/retrieval/store"
)

// The error kinds of the memory service and its keepers; retrieval re-exports
// them (its documentation says when each is returned). Callers map them
// to statuses with errors.Is.
var (
	ErrInvalid     = errors.New("invalid request")
	ErrNotFound    = errors.New("not found")
	ErrNoVectors   = errors.New("this memory service has no vector index")
	ErrClosed      = errors.New("memory service closed")
	ErrEmbed       = errors.New("embedding failed")
	ErrStorage     = errors.New("memory store failed")
	ErrUnavailable = errors.New("memory store unavailable")
	ErrRerank      = errors.New("reranking failed")
)

// ErrStopped ends a build cut short by Close.
var ErrStopped = errors.New("retrieval: build stopped")

// MapStoreErr adds the memory service's error kinds to store errors: the store's
// not-found and invalid errors keep their message; anything else is a
// storage failure.
func MapStoreErr(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, store.ErrInvalid):
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, store.ErrIncompatible):
		// A database this build cannot use (a newer schema, a schema
		// conflict) is not a failed operation: nothing is wrong with the
		// request, and the store serves again once the operator acts.
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("%w: %w", ErrStorage, err)
}

// FieldError is one invalid Config field, as Validate reports it; Field
// is its path ("Dim", "Owner.BackfillBatch"), so that a caller can name
// the setting it came from (a flag).
type FieldError struct {
	Field string
	Value any
	Want  string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("retrieval: %s %v must be %s", e.Field, e.Value, e.Want)
}

// FieldErr returns a *FieldError.
func FieldErr(field string, v any, want string) error {
	return &FieldError{Field: field, Value: v, Want: want}
}

// MaxBatch bounds one write, so one request cannot hold the write lock of
// the store for long (and one back-fill call its embedder).
const MaxBatch = 10000
