package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/scheduler"
)

// Kind classifies an error for clients; it is the error_type of the JSON
// body and selects the status code.
type Kind string

// Error kinds.
const (
	KindInvalid       Kind = "invalid_request"        // malformed JSON, empty query
	KindMediaType     Kind = "unsupported_media_type" // body is not JSON
	KindTooLarge      Kind = "payload_too_large"      // body, request or input too large
	KindValidation    Kind = "validation"             // well-formed but unacceptable fields
	KindUnauthorized  Kind = "unauthorized"
	KindForbidden     Kind = "forbidden" // valid key, namespace outside its scope
	KindNotFound      Kind = "not_found"
	KindMethod        Kind = "method_not_allowed" // not an HTTP method this server knows
	KindOverloaded    Kind = "overloaded"         // queue full: retry later
	KindNotReady      Kind = "not_ready"          // starting or shutting down
	KindUnavailable   Kind = "store_unavailable"  // shared memory store unreachable or catching up: retry
	KindTimeout       Kind = "timeout"            // per-request time limit
	KindBackend       Kind = "backend"            // the model failed (or gave a NaN score)
	KindModelNotFound Kind = "model_not_found"    // a model the server does not serve, under --strict-model-name
	KindInternal      Kind = "internal"
)

// statusOf is the one table from error kind to HTTP status.
var statusOf = map[Kind]int{
	KindInvalid:       http.StatusBadRequest,
	KindMediaType:     http.StatusUnsupportedMediaType,
	KindTooLarge:      http.StatusRequestEntityTooLarge,
	KindValidation:    http.StatusUnprocessableEntity,
	KindUnauthorized:  http.StatusUnauthorized,
	KindForbidden:     http.StatusForbidden,
	KindNotFound:      http.StatusNotFound,
	KindMethod:        http.StatusMethodNotAllowed,
	KindOverloaded:    http.StatusTooManyRequests,
	KindNotReady:      http.StatusServiceUnavailable,
	KindUnavailable:   http.StatusServiceUnavailable,
	KindTimeout:       http.StatusGatewayTimeout,
	KindBackend:       http.StatusFailedDependency,
	KindModelNotFound: http.StatusNotFound,
	KindInternal:      http.StatusInternalServerError,
}

// Error is an error with a kind and a message safe to show clients.
type Error struct {
	Kind Kind
	Msg  string
	Err  error // cause, for logs
	// Param names the request field at fault, where one is (OpenAI's
	// error shape reports it).
	Param string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Status returns the HTTP status of the error's kind.
func (e *Error) Status() int {
	if s, ok := statusOf[e.Kind]; ok {
		return s
	}
	return http.StatusInternalServerError
}

func newError(k Kind, format string, a ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, a...)}
}

// retrievalKinds is the memory service's error kinds in the API's, with
// what the server adds to the service's message (how to start it
// differently), for classify.
var retrievalKinds = map[retrieval.ErrorKind]struct {
	kind Kind
	hint string
}{
	retrieval.KindBadRequest:  {kind: KindInvalid},
	retrieval.KindInvalid:     {kind: KindValidation},
	retrieval.KindNoVectors:   {kind: KindValidation, hint: ": this server has no vector dimension; start it with --vector-dim N (the vectors' length) or --embed-model DIR"},
	retrieval.KindNotFound:    {kind: KindNotFound},
	retrieval.KindTooLarge:    {kind: KindTooLarge},
	retrieval.KindOverloaded:  {kind: KindOverloaded},
	retrieval.KindClosed:      {kind: KindNotReady},
	retrieval.KindUnavailable: {kind: KindUnavailable},
	retrieval.KindStoreDown:   {kind: KindUnavailable},
	retrieval.KindStorage:     {kind: KindInternal},
	retrieval.KindEmbed:       {kind: KindBackend},
}

// classify maps errors to kinds: the server's own, the memory service's
// (by retrieval.Classify's kind, through retrievalKinds), the scheduler's
// and the scorer's. An unknown error is the scoring backend's failure
// (KindBackend: 424), answered as "scoring failed" without its text.
func classify(err error) *Error { return classifyAs(err, "scoring failed") }

// classifyAs is classify with failed the message of an unknown error.
func classifyAs(err error, failed string) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if r := retrieval.Classify(err); r != nil {
		k, ok := retrievalKinds[r.Kind]
		if !ok {
			k.kind = KindInternal
		}
		return &Error{Kind: k.kind, Msg: r.Msg + k.hint, Err: err, Param: r.Field}
	}
	switch {
	case errors.Is(err, scheduler.ErrOverloaded):
		return &Error{Kind: KindOverloaded, Msg: "server overloaded: queue full, retry later", Err: err}
	case errors.Is(err, scheduler.ErrTooLarge):
		return &Error{Kind: KindTooLarge, Msg: "request has more pairs than the queue can ever hold", Err: err}
	case errors.Is(err, scheduler.ErrClosed):
		return &Error{Kind: KindNotReady, Msg: "server is shutting down", Err: err}
	case errors.Is(err, scheduler.ErrBadScore):
		return &Error{Kind: KindBackend, Msg: "model produced an invalid score", Err: err}
	case errors.Is(err, rerank.ErrEmptyQuery):
		return &Error{Kind: KindInvalid, Msg: "query must not be empty", Err: err}
	case errors.Is(err, rerank.ErrNoPrompt), errors.Is(err, rerank.ErrPairTruncation):
		return &Error{Kind: KindInvalid, Msg: err.Error(), Err: err}
	case errors.Is(err, rerank.ErrTooLong), errors.Is(err, rerank.ErrDocTooLong):
		return &Error{Kind: KindTooLarge, Msg: err.Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Msg: "request timed out", Err: err}
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads this answer.
		return &Error{Kind: KindTimeout, Msg: "request cancelled: client disconnected", Err: err}
	}
	return &Error{Kind: KindBackend, Msg: failed, Err: err}
}
