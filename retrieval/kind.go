package retrieval

import (
	"errors"
	"strings"

	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/store"
)

// ErrorKind says what went wrong in a call of the Service (or of the
// embedding queue it shares), in terms a front maps to its answer: one
// table in the front turns a kind into a status, nothing else is read
// from the error to decide.
type ErrorKind string

// The kinds Classify reports.
const (
	// KindBadRequest: the request cannot be taken as a request at all (a
	// blank query, a vector size the model cannot give).
	KindBadRequest ErrorKind = "bad_request"
	// KindInvalid: a well-formed request with unacceptable fields (a bad
	// namespace or ID, a parameter out of range); Error.Field names the
	// first field at fault.
	KindInvalid ErrorKind = "invalid"
	// KindNoVectors: a vector (or a vector mode) sent to a service without
	// a vector dimension.
	KindNoVectors ErrorKind = "no_vectors"
	// KindNotFound: no such memory.
	KindNotFound ErrorKind = "not_found"
	// KindTooLarge: more than a limit allows (a batch of memories, texts
	// in the embedding queue, a text longer than the model's input).
	KindTooLarge ErrorKind = "too_large"
	// KindOverloaded: the embedding queue is full; retry.
	KindOverloaded ErrorKind = "overloaded"
	// KindClosed: the service or the embedding queue is shutting down.
	KindClosed ErrorKind = "closed"
	// KindUnavailable: a shared store's namespace could not catch up in
	// time; nothing stale was answered, nothing was written; retry.
	KindUnavailable ErrorKind = "unavailable"
	// KindStoreDown: the shared database itself cannot be used (down,
	// or of a format this build cannot use); its address and messages
	// are for the operator, not for clients. Retry.
	KindStoreDown ErrorKind = "store_down"
	// KindStorage: the store failed (disk full, I/O error, a damaged
	// record); a failed write is not applied.
	KindStorage ErrorKind = "storage"
	// KindEmbed: the embedding model failed.
	KindEmbed ErrorKind = "embed"
)

// Error is a request the service refuses, as a front shows it: its kind,
// the request field at fault ("" when none is), and a message for clients
// that names the field (every problem of the request, "; "-separated).
type Error struct {
	Kind  ErrorKind
	Field string
	Msg   string
	// Err is the cause, for errors.Is and logs.
	Err error
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// invalid is the error of a request whose fields probs (each naming its
// field first) are unacceptable; it wraps ErrInvalid.
func invalid(field string, probs []string) error {
	return &Error{Kind: KindInvalid, Field: field, Msg: strings.Join(probs, "; "), Err: ErrInvalid}
}

// Classify returns err's kind and client message when err is the
// service's (or its embedding queue's), and nil for any other error: a
// context's, or the reranker's (ErrRerank wraps the scorer's own error,
// which the front that handed the scorer down classifies itself).
func Classify(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return &Error{Kind: KindNotFound, Msg: Describe(err), Err: err}
	case errors.Is(err, ErrNoVectors):
		return &Error{Kind: KindNoVectors, Msg: Describe(err), Err: err}
	case errors.Is(err, ErrInvalid):
		return &Error{Kind: KindInvalid, Msg: Describe(err), Err: err}
	case errors.Is(err, ErrClosed):
		return &Error{Kind: KindClosed, Msg: "server is shutting down", Err: err}
	case errors.Is(err, ErrUnavailable) && (errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrIncompatible)):
		return &Error{Kind: KindStoreDown, Msg: "memory store unavailable: the shared database cannot be used now (the cause is in the server log and in /info); nothing was written or answered from stale data; retry", Err: err}
	case errors.Is(err, ErrUnavailable):
		return &Error{Kind: KindUnavailable, Msg: Describe(err) + " (nothing was written or answered from stale data; retry)", Err: err}
	case errors.Is(err, ErrStorage):
		return &Error{Kind: KindStorage, Msg: "memory store error (disk full, I/O error or a damaged record; a failed write is not applied)", Err: err}
	case errors.Is(err, ErrEmbed):
		return &Error{Kind: KindEmbed, Msg: "embedding failed", Err: err}
	}
	return classifyEmbed(err)
}

// classifyEmbed classifies the embedding queue's and model's errors.
func classifyEmbed(err error) *Error {
	switch {
	case errors.Is(err, embed.ErrOverloaded):
		return &Error{Kind: KindOverloaded, Msg: "server overloaded: embedding queue full, retry later", Err: err}
	case errors.Is(err, embed.ErrTooMany):
		return &Error{Kind: KindTooLarge, Msg: Describe(err), Err: err}
	case errors.Is(err, embed.ErrClosed):
		return &Error{Kind: KindClosed, Msg: "server is shutting down", Err: err}
	case errors.Is(err, embed.ErrTooLong):
		return &Error{Kind: KindTooLarge, Msg: Describe(err) + " (send truncate: true to cut it)", Err: err}
	case errors.Is(err, embed.ErrUnknownPrompt):
		return &Error{Kind: KindInvalid, Field: "prompt_name", Msg: "prompt_name: " + Describe(err), Err: err}
	case errors.Is(err, embed.ErrNoMatryoshka):
		return &Error{Kind: KindBadRequest, Field: "dimensions", Msg: "dimensions: " + Describe(err), Err: err}
	case errors.Is(err, embed.ErrEmptyText):
		return &Error{Kind: KindInvalid, Field: "input", Msg: Describe(err), Err: err}
	}
	return nil
}

// Describe is err's text for a client or an operator's page (/info):
// without the segments ("a: b: c") that only name one of this package's
// layers ("retrieval", "store", "pgstore"), which mean nothing outside
// the process. Only whole segments go, so "pgstore: ping" stays as
// written.
func Describe(err error) string {
	segs := strings.Split(err.Error(), ": ")
	keep := segs[:0]
	for _, seg := range segs {
		if seg == "retrieval" || seg == "store" || seg == "pgstore" {
			continue
		}
		keep = append(keep, seg)
	}
	return strings.Join(keep, ": ")
}
