package retrieval

import "github.com/rerankd/rerankd/retrieval/keep"

// Errors returned (wrapped) by the Service. Callers map them to statuses with
// errors.Is. They are retrieval/keep's, which the keepers return too.
var (
	// ErrInvalid marks a request that can never succeed as sent: a bad
	// namespace or ID, a vector of the wrong dimension, NaN values.
	ErrInvalid = keep.ErrInvalid
	// ErrNotFound marks a memory that does not exist.
	ErrNotFound = keep.ErrNotFound
	// ErrNoVectors marks a vector supplied to a service that has no vector
	// dimension (neither an Embedder nor Config.Dim).
	ErrNoVectors = keep.ErrNoVectors
	// ErrClosed is returned after Close.
	ErrClosed = keep.ErrClosed
	// ErrEmbed marks a failure of the Embedder (the model, not the input).
	ErrEmbed = keep.ErrEmbed
	// ErrStorage marks a store operation that failed for reasons other than
	// the request (disk full, I/O error, a damaged record). A failed write
	// is not applied.
	ErrStorage = keep.ErrStorage
	// ErrUnavailable marks a request that may succeed if retried soon: the
	// shared store cannot be reached, or a namespace's indexes could not
	// catch up with its committed writes within Config.Follow.CatchUp. Nothing
	// stale is answered and no write so failed was acknowledged.
	ErrUnavailable = keep.ErrUnavailable
	// ErrRerank marks a failure of the Reranker.
	ErrRerank = keep.ErrRerank
)

// mapStoreErr adds the service's error kinds to store errors.
var mapStoreErr = keep.MapStoreErr
