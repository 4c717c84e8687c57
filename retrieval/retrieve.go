package retrieval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/embed"
	"github.com/rerankd/rerankd/retrieval/filter"
	"github.com/rerankd/rerankd/retrieval/index"
	"github.com/rerankd/rerankd/retrieval/keep"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/tracing/span"
)

// Level says which retrieval level answered a query (see the package doc).
type Level string

// Retrieval levels, best first.
const (
	LevelHybrid Level = "hybrid"
	LevelBM25   Level = "bm25"
	LevelScan   Level = "scan"
)

// Mode selects which retrievers a query uses.
type Mode string

// Retrieval modes.
const (
	// ModeAuto answers at the best level available (the default).
	ModeAuto Mode = ""
	// ModeBM25 uses the lexical index only.
	ModeBM25 Mode = "bm25"
	// ModeDense uses the vector index only; an error when it cannot.
	ModeDense Mode = "dense"
	// ModeHybrid requires both; an error when vectors are unavailable.
	ModeHybrid Mode = "hybrid"
)

// LevelDense is the level of a ModeDense answer.
const LevelDense Level = "dense"

// Query is one retrieval request.
type Query struct {
	// Namespace to search; required.
	Namespace string
	// Text is the query; required, not blank.
	Text string
	// Vector is an optional client-supplied query vector (of the service's
	// dimension). Without it the Embedder, if any, embeds Text.
	Vector []float32
	// Depth is how many hits each retriever contributes (0: Config.Depth).
	Depth int
	// Fusion overrides Config.Fusion for this query when non-nil.
	Fusion *post.FusionConfig
	// Mode restricts the retrievers (default ModeAuto).
	Mode Mode
	// Ranking is the lexical first stage's ranking; nil is
	// DefaultRanking().
	Ranking *lexrank.Ranking
	// Filter, when set, restricts the search to the memories it matches,
	// before any stage cuts its candidates (filter.Compile makes it).
	Filter *filter.Matcher
}

// Retrieved is the answer to a Query.
type Retrieved struct {
	// Candidates are sorted by fused score, with Text, Time and Vector
	// filled from the store; Scores holds "bm25", "vector" and "fused".
	Candidates []post.Candidate
	// Level is the level that answered.
	Level Level
	// Vectors says what became of the vector side (see VectorsUsed...).
	Vectors string
	// Why says what degraded the answer when something is not ready or
	// failed (the index still building); "" when the answer is as good as
	// the configuration allows, even if not hybrid (Vectors says why).
	Why string
}

// What a search did with vectors (Retrieved.Vectors).
const (
	VectorsUsed          = "used"
	VectorsNotConfigured = "not configured" // no embedder and no vector dimension
	VectorsNotRequested  = "not requested"  // mode bm25
	VectorsBuilding      = "building"       // the vector index is being built (degraded)
	VectorsNoneStored    = "none stored"    // no memory of the namespace has a vector
	VectorsNoQuery       = "no query vector"
)

// lexOnly fuses a single BM25 list with its normalised score as the fused
// score (the default weights would only scale it down).
var lexOnly = post.FusionConfig{Method: post.WeightedSum, VectorWeight: 0, BM25Weight: 1, RRFK: 60}

// vecOnly does the same for a single vector list.
var vecOnly = post.FusionConfig{Method: post.WeightedSum, VectorWeight: 1, BM25Weight: 0, RRFK: 60}

// tracerName names the instrumentation scope of retrieval's spans.
const tracerName = "github.com/rerankd/rerankd/retrieval"

// Retrieve proposes candidates for q at the best level available.
func (s *Service) Retrieve(ctx context.Context, q Query) (Retrieved, error) {
	if err := problemsErr(s.queryProblems(q)); err != nil {
		return Retrieved{}, err
	}
	return s.retrieveChecked(ctx, q)
}

// retrieveChecked is Retrieve of a query already checked.
func (s *Service) retrieveChecked(ctx context.Context, q Query) (Retrieved, error) {
	ctx, rsp := span.Start(ctx, tracerName, "rerankd.retrieve", attribute.String("rerankd.mode", string(q.Mode)))
	got, err := s.retrieve(ctx, q)
	if err == nil {
		rsp.SetAttributes(attribute.String("rerankd.level", string(got.Level)), attribute.Int("rerankd.candidates", len(got.Candidates)))
	}
	span.End(rsp, err)
	return got, err
}

func (s *Service) retrieve(ctx context.Context, q Query) (Retrieved, error) {
	if s.b.Closed() {
		return Retrieved{}, ErrClosed
	}
	depth := q.Depth
	if depth <= 0 {
		depth = s.cfg.Depth
	}
	fusion := s.cfg.Fusion
	if q.Fusion != nil {
		fusion = *q.Fusion
	}
	sp, err := s.k.Open(ctx, q.Namespace)
	if err != nil {
		return Retrieved{}, err
	}
	if sp == nil {
		// Nothing was ever stored here; the level is what a search would
		// have used, so clients see a stable value.
		return Retrieved{Candidates: []post.Candidate{}, Level: LevelBM25, Vectors: VectorsNoneStored}, nil
	}
	wantVec := q.Mode == ModeDense || q.Mode == ModeHybrid
	if !sp.LexReady() && !wantVec {
		sctx, ssp := span.Start(ctx, tracerName, "rerankd.scan")
		got, err := s.scan(sctx, q.Namespace, q.Text, depth, q.ranking(), q.Filter)
		span.End(ssp, err)
		return got, err
	}

	ix := sp.Indexes()
	ranking := q.ranking()
	var allowed *index.Allowed
	if q.Filter != nil {
		_, fsp := span.Start(ctx, tracerName, "rerankd.filter")
		allowed = ix.Allowed(q.Filter)
		fsp.SetAttributes(attribute.Int("rerankd.allowed", allowed.Len()), attribute.Int("rerankd.memories", allowed.Live))
		fsp.End()
	}
	var bm []post.Hit
	var raw map[string]float64 // BM25 of each lexical hit, when a stage changed the score
	if q.Mode != ModeDense {
		lexHits := lexrank.Stage(ctx, ix, q.Text, depth, ranking, allowed)
		bm = make([]post.Hit, len(lexHits))
		if ranking.Staged() {
			raw = make(map[string]float64, len(lexHits))
		}
		for i, h := range lexHits {
			bm[i] = post.Hit{ID: h.ID, Score: h.Score}
			if raw != nil {
				raw[h.ID] = h.BM25
			}
		}
	}
	level, why, vstate := LevelBM25, "", ""
	var vec []post.Hit
	switch {
	case q.Mode == ModeBM25:
		vstate = VectorsNotRequested
	case ix.Vec == nil:
		vstate = VectorsNotConfigured
	case !sp.VecReady():
		vstate, why = VectorsBuilding, "vector index still building"
	case ix.Vec.Len() == 0:
		vstate = VectorsNoneStored
	default:
		qv, err := s.queryVector(ctx, q)
		if err != nil {
			return Retrieved{}, err
		}
		if qv == nil {
			vstate = VectorsNoQuery
			break
		}
		_, vsp := span.Start(ctx, tracerName, "rerankd.vector_search")
		hits, err := ix.SearchVectors(qv, depth, allowed)
		vsp.SetAttributes(attribute.Int("rerankd.hits", len(hits)))
		span.End(vsp, err)
		if err != nil {
			return Retrieved{}, fmt.Errorf("retrieval: vector search: %w", err)
		}
		vec = make([]post.Hit, len(hits))
		for i, h := range hits {
			vec[i] = post.Hit{ID: h.ID, Score: float64(h.Score)}
		}
		level, vstate = LevelHybrid, VectorsUsed
	}
	if wantVec && level != LevelHybrid {
		if ix.Vec != nil && !sp.VecReady() {
			// Not the request's fault: the index is being built (at start
			// without a snapshot, or a shared namespace's first use) and
			// the same request succeeds shortly.
			return Retrieved{}, fmt.Errorf("%w: %s mode: the vector index of %q is still building; retry shortly", ErrUnavailable, q.Mode, q.Namespace)
		}
		return Retrieved{}, fmt.Errorf("%w: %s mode: vectors %s", ErrNoVectors, q.Mode, vstate)
	}
	var cands []post.Candidate
	switch {
	case q.Mode == ModeDense:
		level, cands = LevelDense, post.Fuse(nil, vec, vecOnly)
	case level == LevelHybrid:
		cands = post.Fuse(bm, vec, fusion)
	default:
		cands = post.Fuse(bm, nil, lexOnly)
	}
	if raw != nil {
		for i := range cands {
			c := &cands[i]
			if lex, ok := c.Scores[post.ScoreBM25]; ok {
				c.Scores[post.ScoreLexical] = lex
				c.Scores[post.ScoreBM25] = raw[c.ID]
			}
		}
	}
	_, fsp := span.Start(ctx, tracerName, "rerankd.fill", attribute.Int("rerankd.candidates", len(cands)))
	cands, err = sp.Fill(cands)
	span.End(fsp, err)
	if err != nil {
		return Retrieved{}, err
	}
	return Retrieved{Candidates: cands, Level: level, Vectors: vstate, Why: why}, nil
}

// queryProblems reports every problem of q, each naming its request
// field, and whether one is a vector mode or a vector the service has no
// index for.
func (s *Service) queryProblems(q Query) (probs []string, noVectors bool) {
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if err := memory.ValidateNamespace(q.Namespace); err != nil {
		bad("%s", keyProblem(err)) // namespace "x": ...
	}
	if strings.TrimSpace(q.Text) == "" {
		bad("query: must not be blank")
	}
	switch q.Mode {
	case ModeAuto, ModeBM25, ModeDense, ModeHybrid:
	default:
		bad("mode %q: want bm25, dense or hybrid", q.Mode)
	}
	if (q.Mode == ModeDense || q.Mode == ModeHybrid) && s.b.Dim() == 0 {
		bad("mode %s: %s (no embedder and no vector dimension configured)", q.Mode, ErrNoVectors)
		noVectors = true
	}
	if q.Depth < 0 {
		bad("depth %d: want >= 1 (0: the configured depth)", q.Depth)
	}
	if q.Ranking != nil {
		probs = append(probs, fieldProblems("ranking", q.Ranking.Validate())...)
	}
	if q.Fusion != nil {
		probs = append(probs, fieldProblems("fusion", q.Fusion.Validate())...)
	}
	if q.Vector != nil {
		if err := s.checkVector(q.Vector); err != nil {
			bad("vector: %s", Describe(err))
			noVectors = noVectors || errors.Is(err, ErrNoVectors)
		}
	}
	return probs, noVectors
}

// queryVector returns the client's vector, else the embedded query text,
// else nil. A zero vector (embed.ErrZeroVector) has no direction and is
// treated as absent.
func (s *Service) queryVector(ctx context.Context, q Query) ([]float32, error) {
	v := q.Vector
	if v == nil && s.b.Embedder() != nil {
		ectx, sp := span.Start(ctx, tracerName, "rerankd.embed_query")
		vs, err := s.b.Embedder().Embed(ectx, []string{q.Text}, true)
		span.End(sp, err)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: query: %w", ErrEmbed, err)
		}
		if len(vs) != 1 {
			return nil, fmt.Errorf("%w: query: embedder returned %d vectors", ErrEmbed, len(vs))
		}
		v = vs[0]
	}
	if v == nil {
		return nil, nil
	}
	switch err := embed.Check(v, s.b.Dim()); {
	case errors.Is(err, embed.ErrZeroVector):
		return nil, nil
	case err != nil:
		// Client vectors were checked by checkQuery: this one is the
		// embedder's.
		return nil, fmt.Errorf("%w: query: %w", ErrEmbed, err)
	}
	return v, nil
}

// scan scores up to ScanLimit memories of ns with per-request BM25 (the
// ranking's k1 and b; its other stages need the index): the level used
// while the namespace's index is still being built.
func (s *Service) scan(ctx context.Context, ns, text string, depth int, r lexrank.Ranking, f *filter.Matcher) (Retrieved, error) {
	var recs []store.Record
	if err := ctx.Err(); err != nil {
		return Retrieved{}, err
	}
	for pg, err := range store.Pages(s.b.Store(), ns, min(s.cfg.PageSize, s.cfg.ScanLimit), true) {
		if err != nil {
			return Retrieved{}, fmt.Errorf("retrieval: scan: %w", mapStoreErr(err))
		}
		page := pg.Records
		if f != nil {
			page = make([]store.Record, 0, len(pg.Records))
			for _, r := range pg.Records {
				if f.Match(filter.Of(r.Memory)) {
					page = append(page, r)
				}
			}
		}
		recs = append(recs, page[:min(len(page), s.cfg.ScanLimit-len(recs))]...)
		if len(recs) >= s.cfg.ScanLimit {
			break
		}
		if err := ctx.Err(); err != nil {
			return Retrieved{}, err
		}
	}
	texts := make([]string, len(recs))
	for i, r := range recs {
		texts[i] = r.Memory.Text
	}
	lcfg := lexical.DefaultConfig()
	lcfg.K1, lcfg.B = r.K1, r.B
	lcfg.CJK = s.cfg.BM25.Analysis().Mode() // the index's analysis, so both levels agree
	scorer, err := lexical.New(lcfg)
	if err != nil {
		// checkQuery validated the ranking by the same rule; this is a
		// per-query value, so the client's error if it ever happens.
		return Retrieved{}, fmt.Errorf("%w: ranking: %w", ErrInvalid, err)
	}
	hits := make([]post.Hit, 0, len(recs))
	for i, r := range scorer.Score(text, texts) {
		if r.Raw > 0 {
			hits = append(hits, post.Hit{ID: recs[i].Memory.ID, Score: r.Raw})
		}
	}
	cands := post.Fuse(hits, nil, lexOnly)
	if len(cands) > depth {
		cands = cands[:depth]
	}
	byID := make(map[string]store.Record, len(cands))
	for _, r := range recs {
		byID[r.Memory.ID] = r
	}
	for i := range cands {
		keep.Complete(&cands[i], byID[cands[i].ID], s.b.Dim())
	}
	return Retrieved{Candidates: cands, Level: LevelScan, Vectors: VectorsBuilding, Why: "index still building; scanned the store"}, nil
}

// ranking returns the query's ranking, DefaultRanking when it has none.
func (q Query) ranking() lexrank.Ranking {
	if q.Ranking != nil {
		return *q.Ranking
	}
	return lexrank.DefaultRanking()
}
