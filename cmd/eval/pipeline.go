package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/cmd/internal/device"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/cmd/internal/progress"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/remote"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/memory"
	"github.com/rerankd/rerankd/retrieval/post"
	"github.com/rerankd/rerankd/retrieval/store"
	"github.com/rerankd/rerankd/retrieval/store/bolt"
)

// pipelineSpec is a parsed --pipeline: a retrieval base plus stages.
type pipelineSpec struct {
	base                 string // bm25, dense or hybrid
	rerank, recency, mmr bool
}

// parsePipeline reads "base[+stage...]", e.g. "hybrid+rerank+mmr".
func parsePipeline(s string) (pipelineSpec, error) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), "+")
	p := pipelineSpec{base: parts[0]}
	switch p.base {
	case "bm25", "dense", "hybrid":
	default:
		return p, fmt.Errorf("pipeline %q: base must be bm25, dense or hybrid", s)
	}
	for _, st := range parts[1:] {
		var flag *bool
		switch st {
		case "rerank":
			flag = &p.rerank
		case "recency":
			flag = &p.recency
		case "mmr":
			flag = &p.mmr
		default:
			return p, fmt.Errorf("pipeline %q: unknown stage %q (want rerank, recency or mmr)", s, st)
		}
		if *flag {
			return p, fmt.Errorf("pipeline %q: stage %q twice", s, st)
		}
		*flag = true
	}
	return p, nil
}

// needsEmbedder reports whether the pipeline needs an embedding model.
func (p pipelineSpec) needsEmbedder() bool { return p.base != "bm25" }

// pipelineOptions are the stage parameters from the command line.
type pipelineOptions struct {
	ranking            lexrank.Ranking
	depth, rerankDepth int
	model, embedModel  string
	ortLib, tokenizer  string
	// dev is where the neural stages run (--provider, --device, ...);
	// nil: the CPU.
	dev     *device.Flags
	fusion  post.FusionConfig
	recency post.RecencyConfig
	mmr     post.MMRConfig
	// served are the served stages (--rerank-url, --embed-url).
	served servedOptions
}

// defaultRerankDepth is the candidates reranked per question: /v1/search's
// default rerank_depth, so that an evaluation measures what is served.
const defaultRerankDepth = 50

// models are the opened scoring parts of a pipeline: in process (a model
// folder) or served (a URL); the search cannot tell which.
type models struct {
	// score is the rerank stage's scorer (nil: no rerank stage).
	score    func(ctx context.Context, r rerank.Request) ([]rerank.Score, error)
	embedder retrieval.Embedder
	// reranker and embedderInfo describe them for the run's sidecar.
	reranker, embedderInfo *stageInfo
	// remote are the served stages, for their counts (nil when in process).
	remoteReranker *remote.Reranker
	remoteEmbedder *remote.Embedder
	cache          *remote.Cache
	closers        []func() error
}

func (m models) Close() {
	for _, c := range m.closers {
		_ = c()
	}
}

// openModels opens what p needs, and says plainly what is missing: a
// pipeline never silently runs without its model. A stage is served when
// its URL is given, else run in process from its folder.
func openModels(p pipelineSpec, o pipelineOptions) (m models, err error) {
	defer func() {
		if err != nil {
			m.Close()
			m = models{}
		}
	}()
	sv := o.served
	switch {
	case p.needsEmbedder() && o.embedModel == "" && sv.embedURL == "":
		return m, fmt.Errorf("%w: pipeline %s needs --embed-model DIR (a Qwen3-Embedding ONNX folder; none ships with rerankd) or --embed-url URL (an OpenAI embeddings API)", cli.ErrUsage, p.base)
	case p.rerank && o.model == "" && sv.rerankURL == "":
		return m, fmt.Errorf("%w: the rerank stage needs --model DIR (a reranker ONNX folder from `rerankd convert`) or --rerank-url URL (a served rerank API)", cli.ErrUsage)
	}
	var cache *remote.Cache
	if (p.rerank && sv.rerankURL != "") || (p.needsEmbedder() && sv.embedURL != "") {
		if cache, err = sv.openCache(); err != nil {
			return m, err
		}
		if cache != nil {
			m.cache = cache
			m.closers = append(m.closers, cache.Close)
		}
	}
	if p.needsEmbedder() {
		if sv.embedURL != "" {
			e, info, err := sv.openEmbedder(cache)
			if err != nil {
				return m, err
			}
			m.embedder, m.embedderInfo, m.remoteEmbedder = e, info, e
		} else {
			eo := model.DefaultEmbedderOptions()
			eo.RuntimeLib, eo.Tokenizer = o.ortLib, o.tokenizer
			if o.dev != nil {
				o.dev.Apply(&eo.Session)
			}
			e, err := model.OpenEmbedder(o.embedModel, eo)
			if err != nil {
				return m, fmt.Errorf("--embed-model %s: %w", o.embedModel, err)
			}
			m.embedder = e
			m.closers = append(m.closers, e.Close)
			if m.embedderInfo, err = folderInfo(o.embedModel); err != nil {
				return m, err
			}
		}
	}
	if p.rerank {
		if sv.rerankURL != "" {
			r, info, err := sv.openReranker(cache)
			if err != nil {
				return m, err
			}
			m.score, m.reranker, m.remoteReranker = r.Score, info, r
		} else {
			mo := model.DefaultOptions()
			mo.RuntimeLib, mo.Tokenizer = o.ortLib, o.tokenizer
			if o.dev != nil {
				o.dev.Apply(&mo.Session)
			}
			s, _, err := model.Open(o.model, mo)
			if err != nil {
				return m, fmt.Errorf("--model %s: %w", o.model, err)
			}
			m.score = s.Score
			m.closers = append(m.closers, s.Close)
			if m.reranker, err = folderInfo(o.model); err != nil {
				return m, err
			}
		}
	}
	return m, nil
}

// inFlight is the questions searched at once: --concurrency with a
// served stage, else one (the model's own threads are the parallelism).
func (o pipelineOptions) inFlight() int {
	if o.served.rerankURL != "" || o.served.embedURL != "" {
		return o.served.transport.Concurrency
	}
	return 1
}

// servicePipeline runs p through the same retrieval.Service the server uses:
// each conversation is a namespace of a throwaway store, and each judged
// question a memory search in it.
func servicePipeline(ctx context.Context, ds *locomo.Dataset, unit locomo.Unit, p pipelineSpec, o pipelineOptions,
	m models, qrels metrics.Qrels, stderr io.Writer) (metrics.Run, map[string]locomo.Category, error) {
	dir, err := os.MkdirTemp("", "rerankd-eval-")
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	st, err := bolt.Open(filepath.Join(dir, "eval.db"), bolt.Options{NoSync: true})
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = st.Close() }() // read-only use by now; nothing to lose
	cfg := retrieval.DefaultConfig()
	cfg.Fusion, cfg.Depth = o.fusion, o.depth
	e, err := retrieval.New(st, m.embedder, cfg)
	if err != nil {
		return nil, nil, err
	}
	e.Start()
	defer func() { _ = e.Close() }()
	if err := e.Wait(ctx); err != nil {
		return nil, nil, err
	}

	run := metrics.Run{}
	category := map[string]locomo.Category{}
	bar := progress.New(stderr, int64(len(qrels)), pipelineName(p), progress.Items)
	var mu sync.Mutex
	for i := range ds.Conversations {
		conv := &ds.Conversations[i]
		ns := "conv-" + safeName(conv.ID)
		docIDs, now, err := ingest(ctx, e, ns, conv.Memories(unit), unit)
		if err != nil {
			return nil, nil, fmt.Errorf("conversation %s: %w", conv.ID, err)
		}
		// The judged questions, searched o.inFlight() at a time; each
		// question's ranking is its own, whatever the order.
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(o.inFlight())
		for _, q := range conv.Questions {
			if _, judged := qrels[q.ID]; !judged {
				continue
			}
			category[q.ID] = q.Category
			g.Go(func() error {
				ranked, err := searchOne(gctx, e, ns, q.Text, p, o, m, now)
				if err != nil {
					return fmt.Errorf("question %s: %w", q.ID, err)
				}
				for j := range ranked {
					ranked[j].DocID = docIDs[ranked[j].DocID]
				}
				mu.Lock()
				run[q.ID] = ranked
				mu.Unlock()
				bar.Add(1)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, nil, err
		}
	}
	return run, category, nil
}

// ingest stores a conversation's memories under IDs the store accepts
// ("m000123"; LoCoMo's "26/D1:3" has a separator) and returns the map back
// to LoCoMo document IDs, and the time of the newest memory: questions are
// asked after the conversation, so that is "now" for recency. A memory's
// Source is its session ("S3"), as a chat agent records the session a
// message came from; its Time is the session's (LoCoMo dates sessions, not
// turns), so within a session the IDs, numbered in dialog order, keep the
// turns in order for the context stage. A turn's speaker is its metadata
// "speaker" (retrieval.DefaultSpeakerKey).
func ingest(ctx context.Context, e *retrieval.Service, ns string, mems []locomo.Memory, unit locomo.Unit) (map[string]string, time.Time, error) {
	docIDs := make(map[string]string, len(mems))
	var now time.Time
	const batch = 256
	for start := 0; start < len(mems); start += batch {
		items := make([]store.Item, 0, batch)
		for j, mm := range mems[start:min(start+batch, len(mems))] {
			id := fmt.Sprintf("m%06d", start+j)
			docIDs[id] = mm.DocID
			if mm.Time.After(now) {
				now = mm.Time
			}
			source := fmt.Sprintf("S%d", mm.Session)
			if unit != locomo.UnitTurn && unit != locomo.UnitObservation {
				source = "" // a session or its summary has no neighbours of its own kind
			}
			var meta memory.Metadata // who said it, where a chat agent keeps it (field-aware matching reads it)
			if mm.Speaker != "" {
				meta = memory.Metadata{retrieval.DefaultSpeakerKey: memory.String(mm.Speaker)}
			}
			items = append(items, store.Item{Memory: memory.Memory{Namespace: ns, ID: id, Text: mm.Text, Time: mm.Time, Source: source, Metadata: meta}})
		}
		if _, err := e.Add(ctx, items); err != nil {
			return nil, now, err
		}
	}
	return docIDs, now, nil
}

// searchOne runs one question through the served pipeline
// (retrieval.Service.Search: rerank through the server's adapter, then
// recency and MMR) and returns its ranking (store IDs). MMR only orders
// its window, so the candidates it leaves out follow in score order
// (KeepRest), keeping deep metrics (Recall@20) comparable across
// pipelines.
func searchOne(ctx context.Context, e *retrieval.Service, ns, q string, p pipelineSpec, o pipelineOptions, m models, now time.Time) ([]metrics.Ranked, error) {
	rk := o.ranking
	req := retrieval.SearchRequest{Query: retrieval.Query{Namespace: ns, Text: q, Depth: o.depth, Ranking: &rk}, TopK: o.depth, KeepRest: true}
	switch p.base {
	case "bm25":
		req.Mode = retrieval.ModeBM25
	case "dense":
		req.Mode = retrieval.ModeDense
	default:
		req.Mode = retrieval.ModeHybrid
	}
	if p.rerank {
		// Served search's adapter and per-document cut (serve's default).
		req.Rerank = rerank.Reranker{Score: m.score, MaxDocTokens: rerank.DefaultMaxDocTokens}
		req.RerankDepth = o.rerankDepth
	}
	if p.recency {
		rc := o.recency
		req.Recency, req.Now = &rc, now
	}
	if p.mmr {
		mc := o.mmr
		req.MMR = &mc
	}
	res, err := e.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	cands := slices.Concat(res.Results, res.Rest)
	if len(cands) > o.depth {
		cands = cands[:o.depth]
	}
	// The run keeps the final scores, so ties are broken by trec_eval's
	// rule as for any run; MMR's order is not a score order, so there the
	// score is derived from the rank.
	// Lexical-only bm25 writes the raw lexical score (same order as the
	// fused one, and comparable across questions, which calibration
	// needs): BM25's, or the lexical stages' when they changed it.
	out := make([]metrics.Ranked, len(cands))
	for i, c := range cands {
		out[i] = metrics.Ranked{DocID: c.ID, Score: c.Score}
		switch {
		case p.mmr:
			out[i].Score = float64(len(cands) - i)
		case p == pipelineSpec{base: "bm25"}:
			if lex, ok := c.Scores[post.ScoreLexical]; ok {
				out[i].Score = lex // the stages' score, in their order
			} else {
				out[i].Score = c.Scores[post.ScoreBM25]
			}
		}
	}
	return out, nil
}

func pipelineName(p pipelineSpec) string {
	parts := []string{p.base}
	for _, s := range []struct {
		on   bool
		name string
	}{{p.rerank, "rerank"}, {p.recency, "recency"}, {p.mmr, "mmr"}} {
		if s.on {
			parts = append(parts, s.name)
		}
	}
	return strings.Join(parts, "+")
}

// safeName maps a conversation ID onto the namespace charset.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// defaultModelPaths fills the runtime paths from the environment.
func defaultModelPaths(o *pipelineOptions) {
	if o.ortLib == "" && o.dev != nil {
		o.ortLib = paths.ORTLibFor(o.dev.Provider)
	} else if o.ortLib == "" {
		o.ortLib = paths.ORTLib()
	}
	if o.tokenizer == "" {
		o.tokenizer = paths.Tokenizer()
	}
}
