package retrieval

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/rerankd/rerankd/retrieval/bm25"
	"github.com/rerankd/rerankd/retrieval/follow"
	"github.com/rerankd/rerankd/retrieval/hnsw"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/owner"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
)

// DefaultSpeakerKey is Config.SpeakerKey's default.
const DefaultSpeakerKey = "speaker"

// Config configures a Service. Start from DefaultConfig.
type Config struct {
	// BM25 configures every namespace's lexical index. Its Analyzer (nil:
	// lexical's default, CJK unigram+bigram) analyses memories and
	// queries at every level, the scan included; choose another
	// lexical.CJKMode for Chinese or Japanese memories. Its K1 and B (1.2
	// and 0.75 by default, validated by lexical.CheckK1 and CheckB) are
	// the index's own, for bm25.Index.Search: the service's searches rank
	// with each query's Ranking.
	BM25 bm25.Config
	// SpeakerKey is the metadata key whose value is a memory's speaker
	// (who said or wrote it) for field-aware matching (Ranking.Fields):
	// "speaker" by default; empty: no memory has a speaker field. It is
	// read when a memory is indexed.
	SpeakerKey string
	// Fusion combines BM25 and vector hits at the hybrid level (weighted sum
	// 0.7 vector / 0.3 BM25 by default, or RRF).
	Fusion post.FusionConfig
	// Dim is the vector dimension for client-supplied vectors when there is
	// no Embedder; 0 means the service has no vector index unless an Embedder
	// gives one. With an Embedder it must be 0 or equal the Embedder's Dim.
	Dim int
	// HNSW holds the vector indexes' graph and search parameters
	// (hnsw.DefaultConfig's by default); its Dim is ignored, every index
	// takes the service's dimension. A snapshot built with other graph
	// parameters is refused; other search parameters are applied to it.
	HNSW hnsw.Config
	// Depth is how many hits each retriever contributes before fusion when
	// the query does not say. Default 100.
	Depth int
	// ScanLimit bounds how many memories a scan-level search reads from the
	// store (the newest are not preferred: IDs are read in byte order).
	// Default 20000.
	ScanLimit int
	// PageSize is how many records the start-up build reads per store read
	// transaction; smaller pages block writers for less time. Default 1000.
	PageSize int
	// Progress, when set, is called during the start-up build with the
	// number of memories indexed so far and the total, per phase ("bm25",
	// then "vector"), and then during the back-fill ("backfill", memories
	// looked at so far). It must be fast and must not call the Service.
	Progress func(phase string, done, total int)
	// Logger receives what the service decides on its own: snapshots loaded,
	// refused (and why) or saved, back-fill progress and embedder errors.
	// nil discards.
	Logger *slog.Logger

	// Rerank is how the API's searches rerank (SearchRequestOf): the
	// scheduled scorer handed down by the composition root, and the
	// server's defaults around it. The zero value cannot rerank.
	Rerank Reranking

	// Owner configures the keeper of a store of this process alone (a
	// bbolt file); Follow the keeper of a store shared with other
	// processes (PostgreSQL). Only the one New picks is used.
	Owner  OwnerConfig
	Follow FollowConfig
}

type (
	// OwnerConfig configures the owner, the keeper of a store of this
	// process alone (retrieval/owner). It validates itself.
	OwnerConfig = owner.Config
	// FollowConfig configures the follower, the keeper of a shared store
	// (retrieval/follow). It validates itself.
	FollowConfig = follow.Config
)

// DefaultConfig returns the defaults documented on Config's fields.
func DefaultConfig() Config {
	return Config{
		BM25:      bm25.DefaultConfig(),
		HNSW:      hnsw.DefaultConfig(0),
		Fusion:    post.DefaultFusionConfig(),
		Depth:     100,
		ScanLimit: 20000,
		PageSize:  1000,

		SpeakerKey: DefaultSpeakerKey,

		Owner:  owner.DefaultConfig(),
		Follow: follow.DefaultConfig(),
	}
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	if err := c.BM25.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Fusion.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.vectorIndex(1).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("retrieval: HNSW: %w", err))
	}
	if len(c.SpeakerKey) > memory.MaxMetadataKeyLen {
		errs = append(errs, fmt.Errorf("retrieval: SpeakerKey is %d bytes, more than a metadata key may have (%d)", len(c.SpeakerKey), memory.MaxMetadataKeyLen))
	}
	if c.Dim < 0 {
		errs = append(errs, fieldErr("Dim", c.Dim, ">= 0"))
	}
	if c.Depth < 1 {
		errs = append(errs, fieldErr("Depth", c.Depth, ">= 1"))
	}
	if c.ScanLimit < 1 {
		errs = append(errs, fieldErr("ScanLimit", c.ScanLimit, ">= 1"))
	}
	if c.PageSize < 1 || c.PageSize > store.MaxPage {
		errs = append(errs, fieldErr("PageSize", c.PageSize, fmt.Sprintf("in 1..%d", store.MaxPage)))
	}
	errs = append(errs, c.Rerank.validate()...)
	if err := c.Owner.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Follow.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// FieldError is one invalid Config field, as Validate reports it; Field
// is its path ("Dim", "Owner.BackfillBatch"), so that a caller can name
// the setting it came from (a flag).
type FieldError = keep.FieldError

// Problems returns each problem Validate joined into err, in order; the
// ones about a field are *FieldError.
func Problems(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Problems(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

var fieldErr = keep.FieldErr

// vectorIndex is the configuration of every vector index of a service of
// dimension dim.
func (c Config) vectorIndex(dim int) hnsw.Config {
	h := c.HNSW
	h.Dim = dim
	return h
}
