package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/scoring"
)

// decode parses a rerank body: syntax errors are 400, wrong field types 422.
func decode(c *fiber.Ctx) (*api.RerankRequest, error) { return decodeJSON[api.RerankRequest](c) }

// decodeJSON parses a JSON body into a T: a non-JSON content type is 415,
// syntax errors 400, wrong field types 422.
func decodeJSON[T any](c *fiber.Ctx) (*T, error) {
	if err := checkJSONType(c); err != nil {
		return nil, err
	}
	return decodeBytes[T](c.Body())
}

// checkJSONType refuses a body whose content type is not JSON (415); an
// absent content type is read as JSON.
func checkJSONType(c *fiber.Ctx) error {
	if ct := c.Get(fiber.HeaderContentType); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != fiber.MIMEApplicationJSON && !strings.HasSuffix(mt, "+json")) {
			return newError(KindMediaType, "content type %q: send application/json", ct)
		}
	}
	return nil
}

// decodeBytes parses JSON into a T with decodeJSON's answers: syntax errors
// are invalid_request, wrong field types validation.
func decodeBytes[T any](body []byte) (*T, error) {
	var req T
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		var timeErr *time.ParseError
		var docErr *api.DocumentError
		var inErr *api.InputsError
		switch {
		case errors.As(err, &docErr):
			return nil, newError(KindValidation, "documents: %s", docErr.Msg)
		case errors.As(err, &inErr):
			field := "inputs"
			if _, ok := any(&req).(*api.EmbeddingsRequest); ok {
				field = "input"
			}
			e := newError(KindValidation, "%s: %s", field, inErr.Msg)
			e.Param = field
			return nil, e
		case errors.As(err, &timeErr) || strings.Contains(err.Error(), "Time.UnmarshalJSON"):
			// The same answer whichever Go release decoded it (1.26 reports a
			// number as a parse error, 1.27 as a type error).
			return nil, newError(KindValidation, "a time field is not an RFC 3339 time string: %v", err)
		case errors.As(err, &typeErr):
			if typeErr.Type != nil && typeErr.Type.String() == "time.Time" {
				return nil, newError(KindValidation, "a time field is not an RFC 3339 time string: field %q got JSON %s", typeErr.Field, typeErr.Value)
			}
			e := newError(KindValidation, "field %q: got JSON %s, want %s", typeErr.Field, typeErr.Value, jsonKind(typeErr.Type))
			e.Param = typeErr.Field
			return nil, e
		}
		return nil, newError(KindInvalid, "malformed JSON body: %v", err)
	}
	return &req, nil
}

// validate checks a decoded request against the API rules and the
// server's limits, reporting every problem at once.
func (s *Server) validate(r *api.RerankRequest) error {
	if strings.TrimSpace(r.Query) == "" {
		return newError(KindInvalid, "query must not be empty")
	}
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	n := len(r.Documents)
	switch {
	case r.Texts != nil && r.Documents != nil:
		bad("send either documents or texts, not both")
	case r.TEIStyle():
		n = len(r.Texts)
	}
	if n == 0 {
		bad("documents (or texts) must not be empty")
	}
	if n > s.cfg.MaxDocuments {
		bad("%d documents: this server accepts at most %d per request", n, s.cfg.MaxDocuments)
	}
	if r.TopN != nil && *r.TopN < 1 {
		bad("top_n %d: want >= 1 (omit it for all results)", *r.TopN)
	}
	if r.Threshold != nil && !(*r.Threshold >= 0 && *r.Threshold <= 1) {
		bad("threshold %v: want a probability in [0, 1]", *r.Threshold)
	}
	if r.MaxTokensPerDoc < 0 {
		bad("max_tokens_per_doc %d: want >= 0", r.MaxTokensPerDoc)
	}
	switch strings.ToLower(r.TruncationDirection) {
	case "", "right", "left":
	default:
		bad("truncation_direction %q: want Right or Left", r.TruncationDirection)
	}
	if len(probs) > 0 {
		return newError(KindValidation, "%s", strings.Join(probs, "; "))
	}
	return nil
}

// ranked is one scored document during sorting and filtering.
type ranked struct {
	index int
	score rerank.Score
}

// rank sorts by score (highest first, ties by index), drops results under
// the threshold (a probability, whatever raw_scores says), then keeps top_n.
func rank(scores []rerank.Score, threshold *float64, topN *int) []ranked {
	out := make([]ranked, 0, len(scores))
	for i, sc := range scores {
		if threshold == nil || sc.Score >= *threshold {
			out = append(out, ranked{i, sc})
		}
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		switch {
		case a.score.Score > b.score.Score:
			return -1
		case a.score.Score < b.score.Score:
			return 1
		}
		return a.index - b.index
	})
	if topN != nil && *topN < len(out) {
		out = out[:*topN]
	}
	return out
}

func (s *Server) handleRerank(c *fiber.Ctx) error {
	req, err := decode(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.RequestTimeout)
	defer cancel()
	stop := watchDisconnect(c.Context().Conn(), cancel, 50*time.Millisecond)
	rr, err := s.rerank(ctx, req)
	stop()
	if err != nil {
		return err
	}
	setTiming(c, rr.out.Timing, rr.elapsed)
	c.Set("X-Backend", s.backend.Name())
	if req.TEIStyle() {
		list := make([]api.TEIResult, len(rr.results))
		for i, r := range rr.results {
			list[i] = api.TEIResult{Index: r.index, Score: rr.value(r.score)}
			if req.ReturnText {
				list[i].Text = &rr.texts[r.index]
			}
		}
		return c.JSON(list)
	}
	return c.JSON(s.rerankResponse(req, rr))
}

// reranked is one validated request's scores, ranked and filtered.
type reranked struct {
	texts   []string
	out     scoring.Scored
	results []ranked
	elapsed time.Duration
	raw     bool
	model   string // the served name of the model that answered
}

// value is what the API reports for a score: the logit when raw scores
// were asked for, else the probability.
func (rr reranked) value(sc rerank.Score) float64 {
	if rr.raw {
		return sc.Logit
	}
	return sc.Score
}

// rerank validates req and scores it; /rerank and MCP's rerank tool are
// this one function.
func (s *Server) rerank(ctx context.Context, req *api.RerankRequest) (reranked, error) {
	model, err := s.answering(s.rerankerNames(), "the reranker", req.Model, "model")
	if err != nil {
		return reranked{}, err
	}
	if err := s.validate(req); err != nil {
		return reranked{}, err
	}
	texts := req.Texts
	if !req.TEIStyle() {
		texts = make([]string, len(req.Documents))
		for i, d := range req.Documents {
			texts[i] = d.Text
		}
	}
	maxDoc := docLimit(s.cfg.MaxTokensPerDoc, req.MaxTokensPerDoc)
	mr := rerank.Request{Instruction: req.Instruction, Query: req.Query, Context: req.Context, Docs: texts,
		MaxDocTokens: maxDoc, KeepEnd: strings.EqualFold(req.TruncationDirection, "left"),
		NoTruncate: req.Truncate != nil && !*req.Truncate}
	start := time.Now()
	out, err := scoring.Score(ctx, s.backend, mr)
	if err != nil {
		return reranked{}, err
	}
	for i, sc := range out.Scores {
		if math.IsNaN(sc.Score) || math.IsInf(sc.Score, 0) || math.IsNaN(sc.Logit) {
			return reranked{}, &Error{Kind: KindBackend, Msg: "model produced an invalid score", Err: fmt.Errorf("document %d: score %v", i, sc.Score)}
		}
	}
	s.metrics.observeScored(s.backend.Name(), out, len(texts))
	threshold := req.Threshold
	if threshold == nil {
		threshold = scoring.DefaultThreshold(s.backend) // the calibration's, if any
	}
	return reranked{texts: texts, out: out, results: rank(out.Scores, threshold, req.TopN),
		elapsed: time.Since(start), raw: req.RawScores, model: model}, nil
}

// rerankResponse is the Cohere/Jina-style answer to req.
func (s *Server) rerankResponse(req *api.RerankRequest, rr reranked) api.RerankResponse {
	resp := api.RerankResponse{ID: requestID(), Model: rr.model, Backend: s.backend.Name(), Results: make([]api.RerankResult, len(rr.results))}
	for i, r := range rr.results {
		resp.Results[i] = api.RerankResult{Index: r.index, RelevanceScore: rr.value(r.score), Truncated: r.score.Truncated}
		if req.ReturnDocuments {
			resp.Results[i].Document = &req.Documents[r.index]
		}
	}
	tokens := 0
	for _, sc := range rr.out.Scores {
		tokens += sc.Tokens
	}
	resp.Meta = api.Meta{APIVersion: api.APIVersion{Version: "2"}, BilledUnits: api.BilledUnits{SearchUnits: 1}, Tokens: api.TokenCounts{InputTokens: tokens}}
	resp.Usage = api.Usage{TotalTokens: tokens}
	return resp
}

// setTiming writes text-embeddings-inference's timing headers, in ms.
func setTiming(c *fiber.Ctx, t scoring.Timing, total time.Duration) {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64) }
	c.Set("X-Tokenization-Time", ms(t.Tokenize))
	c.Set("X-Queue-Time", ms(t.Queue))
	c.Set("X-Inference-Time", ms(t.Inference))
	c.Set("X-Compute-Time", ms(total))
}

func requestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return hex.EncodeToString(b[:])
}

// runtimeVersion is the inference runtime's version, "" when none is set.
func (s *Server) runtimeVersion() string {
	if s.cfg.Runtime == nil {
		return ""
	}
	return s.cfg.Runtime()
}

func (s *Server) handleInfo(c *fiber.Ctx) error {
	info := api.Info{Version: s.cfg.Version, ModelID: s.backend.ModelID(), Backend: s.backend.Name(),
		MaxDocuments: s.cfg.MaxDocuments, MaxTokens: s.backend.MaxTokens(), MaxTokensPerDoc: s.cfg.MaxTokensPerDoc,
		MaxBodyBytes: s.cfg.MaxBodyBytes, RequestTimeoutSec: s.cfg.RequestTimeout.Seconds(),
		MaxBatchTokens: s.limits.BatchTokens, MaxBatchRequests: s.limits.MaxBatch, MaxQueuePairs: s.limits.QueueSize,
		Runtime: s.runtimeVersion(), Truncation: truncationInfo(s.cfg, s.backend.MaxTokens()), Engine: s.cfg.Engine,
		Template: s.cfg.Template, Architecture: s.cfg.Architecture, SupportedModels: s.cfg.SupportedModels,
		ServedModelNames: s.rerankerNames(), StrictModelName: s.cfg.StrictModelName, Embedder: s.embedderInfo()}
	if s.mem != nil {
		info.Memory = s.memoryInfo()
	}
	info.RandomWeights = s.cfg.RandomWeights
	if s.cfg.RandomWeights {
		info.Warnings = append(info.Warnings, "reranker: "+RandomWeightsWarning)
	}
	if s.emb != nil && s.emb.RandomWeights {
		info.Warnings = append(info.Warnings, "embedder: "+RandomWeightsWarning)
	}
	if c, ok := s.backend.(*scoring.Calibrated); ok {
		cal := c.Calibration()
		info.Calibration = &api.CalibrationInfo{Method: string(cal.Method), Threshold: cal.Threshold, Rule: cal.Rule,
			Pipeline: cal.Source.Pipeline, Data: cal.Source.Data}
	}
	return c.JSON(info)
}

// handleHealth answers 200 only when the backend scores a tiny probe. A
// success is reused for HealthProbeEvery so health checks cannot load the
// model; a failure is retried on the next check.
func (s *Server) handleHealth(c *fiber.Ctx) error {
	s.healthMu.Lock()
	fresh := time.Since(s.healthOK) < s.cfg.HealthProbeEvery
	s.healthMu.Unlock()
	if !fresh {
		ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.RequestTimeout)
		defer cancel()
		out, err := s.backend.Score(ctx, rerank.Request{Query: "health probe", Docs: []string{"probe"}})
		if err != nil || len(out.Scores) != 1 || math.IsNaN(out.Scores[0].Score) {
			return &Error{Kind: KindNotReady, Msg: "backend probe failed", Err: err}
		}
		s.healthMu.Lock()
		s.healthOK = time.Now()
		s.healthMu.Unlock()
	}
	return c.JSON(fiber.Map{"status": "ok", "backend": s.backend.Name()})
}

func (s *Server) handleReady(c *fiber.Ctx) error {
	if !s.ready.Load() {
		return newError(KindNotReady, "not ready")
	}
	if s.mem != nil {
		// A replica that cannot reach the shared store cannot answer the
		// memory API: the load balancer should send its traffic elsewhere.
		// (A store of this process alone always answers.)
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		err := s.mem.Ping(ctx)
		s.storeState.observe(s.log, err)
		if err != nil {
			// Probes are unauthenticated: the database's address, user and
			// messages go to the log and to /info, not here.
			return &Error{Kind: KindNotReady, Msg: "not ready: the shared memory store is unavailable (the cause is in the server log and in /info)", Err: err}
		}
	}
	return c.JSON(fiber.Map{"status": "ready"})
}

// jsonKind names a Go type as the JSON a client should have sent: the
// API's users read JSON, not our type names.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another JSON type"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.String:
		return "a JSON string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a JSON integer"
	case reflect.Float32, reflect.Float64:
		return "a JSON number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another JSON type"
}
