package retrieval

import "errors"

// Errors returned (wrapped) by the Engine. Callers map them to statuses with
// errors.Is.
var (
	// ErrInvalid marks a request that can never succeed as sent: a bad
	// namespace or ID, a vector of the wrong dimension, NaN values.
	ErrInvalid = errors.New("invalid request")
	// ErrNotFound marks a memory that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrNoVectors marks a vector supplied to an engine that has no vector
	// dimension (neither an Embedder nor Config.Dim).
	ErrNoVectors = errors.New("this engine has no vector index")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("retrieval engine closed")
	// ErrEmbed marks a failure of the Embedder (the model, not the input).
	ErrEmbed = errors.New("embedding failed")
	// ErrStorage marks a store operation that failed for reasons other than
	// the request (disk full, I/O error, a damaged record). A failed write
	// is not applied.
	ErrStorage = errors.New("memory store failed")
	// ErrUnavailable marks a request that may succeed if retried soon: the
	// shared store cannot be reached, or a namespace's indexes could not
	// catch up with its committed writes within Config.Follow.CatchUp. Nothing
	// stale is answered and no write so failed was acknowledged.
	ErrUnavailable = errors.New("memory store unavailable")
	// ErrRerank marks a failure of the Reranker.
	ErrRerank = errors.New("reranking failed")
)
