package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/retrieval"
	"github.com/rerankd/rerankd/scheduler"
	"github.com/rerankd/rerankd/scoring"
)

// Determinism: the same request gives the same answer across runs, batch
// compositions and concurrency levels. Bodies are compared after removing
// the per-request id (and, for search, the timings): byte for byte where
// the computation is the same (the lexical backend; the same request run
// alone), and with scores within detTol where the scheduler batches the
// pairs differently (ONNX float32 sums depend on padding and batch shape).

const (
	detTol      = 1e-6 // relevance scores (probabilities)
	detLogitTol = 1e-5 // raw_scores logits: float32, batch-shape dependent
)

var (
	idField     = regexp.MustCompile(`^\{"id":"[0-9a-f]{24}",`)
	timingField = regexp.MustCompile(`,"timing_ms":\{[^}]*\}`)
)

// canon removes what legitimately differs between runs.
func canon(t *testing.T, r response) string {
	t.Helper()
	if r.code != 200 {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	b := idField.ReplaceAll(r.body, []byte("{"))
	if bytes.Equal(b, r.body) && bytes.HasPrefix(r.body, []byte(`{"id"`)) {
		t.Fatalf("id field not found in %s", r.body)
	}
	return string(timingField.ReplaceAll(b, nil))
}

// sameWithin reports where two JSON documents differ: strings, keys and
// lengths exactly, numbers within tol (indexes and counts are integers, so
// any change in them shows). It records the largest numeric difference.
func sameWithin(a, b string, tol float64) error {
	var x, y any
	for _, p := range []struct {
		s string
		v *any
	}{{a, &x}, {b, &y}} {
		dec := json.NewDecoder(strings.NewReader(p.s))
		dec.UseNumber()
		if err := dec.Decode(p.v); err != nil {
			return err
		}
	}
	return diffJSON("$", x, y, tol)
}

// maxDiff is the largest numeric difference sameWithin has seen (logged).
var maxDiff struct {
	sync.Mutex
	v float64
}

func diffJSON(path string, x, y any, tol float64) error {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok || len(xv) != len(yv) {
			return fmt.Errorf("%s: %v vs %v", path, x, y)
		}
		for k := range xv {
			if err := diffJSON(path+"."+k, xv[k], yv[k], tol); err != nil {
				return err
			}
		}
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return fmt.Errorf("%s: %d vs %d elements", path, len(xv), len(yv))
		}
		for i := range xv {
			if err := diffJSON(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i], tol); err != nil {
				return err
			}
		}
	case json.Number:
		yv, ok := y.(json.Number)
		if !ok {
			return fmt.Errorf("%s: %v vs %v", path, x, y)
		}
		a, _ := xv.Float64()
		b, _ := yv.Float64()
		d := math.Abs(a - b)
		maxDiff.Lock()
		maxDiff.v = max(maxDiff.v, d)
		maxDiff.Unlock()
		if d > tol {
			return fmt.Errorf("%s: %v vs %v (diff %.3g)", path, xv, yv, d)
		}
	default:
		if x != y {
			return fmt.Errorf("%s: %v vs %v", path, x, y)
		}
	}
	return nil
}

// concurrently sends every body at once (after a common start) and returns
// the canonical answers in order.
func concurrently(t *testing.T, url string, bodies []string) []string {
	t.Helper()
	raw := make([][]byte, len(bodies))
	errs := make([]error, len(bodies))
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			if resp.StatusCode != 200 {
				errs[i] = fmt.Errorf("status %d: %s", resp.StatusCode, buf.String())
				return
			}
			raw[i] = buf.Bytes()
		}()
	}
	close(gate)
	wg.Wait()
	out := make([]string, len(bodies))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		out[i] = canon(t, response{code: 200, body: raw[i]})
	}
	return out
}

var detDocs = []string{
	"Caroline went to an LGBTQ support group yesterday and felt welcome.",
	"Melanie painted a sunset over the lake last summer.",
	"Caroline adopted a rescue cat named Luna.",
	"The support group meets every Tuesday evening at the community centre on Elm Street, and Caroline has been going since March.",
	"x",
	"Melanie's kids love camping; they went to the mountains in July and saw a bear.",
	"",
	"Caroline is researching adoption agencies because she wants to build a family.",
}

func detRerankBody(query string, docs []string, extra string) string {
	b, _ := json.Marshal(map[string]any{"query": query, "documents": docs})
	return strings.TrimSuffix(string(b), "}") + extra + "}"
}

// checkRerankDeterminism runs one target request sequentially, 16 times at
// once, and mixed with other requests that share its documents, and
// compares every answer with the first. exact demands byte equality even
// when batches differ.
func checkRerankDeterminism(t *testing.T, url string, exact bool) {
	const q = "What did Caroline do at the support group?"
	target := detRerankBody(q, detDocs, `,"return_documents":true,"top_n":6`)
	want := canon(t, postJSON(t, url, target))
	check := func(what, got string) {
		t.Helper()
		if got == want {
			return
		}
		if exact {
			t.Errorf("%s: not byte-identical:\n got %s\nwant %s", what, got, want)
		} else if err := sameWithin(got, want, detTol); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	for i := range 3 { // sequential runs: the same batches, so the same bytes
		if got := canon(t, postJSON(t, url, target)); got != want {
			t.Errorf("sequential run %d: not byte-identical:\n got %s\nwant %s", i, got, want)
		}
	}
	identical, n := 0, 0
	same := make([]string, 16)
	for i := range same {
		same[i] = target
	}
	for i, got := range concurrently(t, url, same) {
		check(fmt.Sprintf("concurrent %d/16", i), got)
		n++
		if got == want {
			identical++
		}
	}
	// Mixed: the target among requests that hold its documents in other
	// orders, subsets and with other documents, and other queries.
	bodies := []string{target}
	for i := range 15 {
		docs := append([]string(nil), detDocs...)
		switch i % 3 {
		case 0: // reversed, plus new documents
			for l, r := 0, len(docs)-1; l < r; l, r = l+1, r-1 {
				docs[l], docs[r] = docs[r], docs[l]
			}
			docs = append(docs, fmt.Sprintf("filler %d %s", i, strings.Repeat("word ", 5*i)))
			bodies = append(bodies, detRerankBody(q, docs, ""))
		case 1: // another query
			bodies = append(bodies, detRerankBody(fmt.Sprintf("What did Melanie do in month %d?", i), docs, ""))
		default: // the target again
			bodies = append(bodies, target)
		}
	}
	for i, got := range concurrently(t, url, bodies) {
		if bodies[i] == target {
			check(fmt.Sprintf("mixed request %d", i), got)
			n++
			if got == want {
				identical++
			}
		}
	}
	t.Logf("%d of %d concurrent answers byte-identical to the sequential one", identical, n)
}

// TestDeterminismLexical: the embedded lexical backend answers byte for
// byte the same, whatever else runs.
func TestDeterminismLexical(t *testing.T) {
	url := start(t, DefaultConfig(), scoring.NewLexical(lexical.Default())) + "/rerank"
	checkRerankDeterminism(t, url, true)
}

// TestDeterminismSearchLexical: /v1/search over the same store answers the
// same query identically, alone, 16 at once and among other searches.
func TestDeterminismSearchLexical(t *testing.T) {
	base := startMemory(t, DefaultConfig(), scoring.NewLexical(lexical.Default()), retrieval.DefaultConfig())
	seedDetMemories(t, base)
	checkSearchDeterminism(t, base+"/v1/search", true, searchPlain, searchAll)
}

func seedDetMemories(t *testing.T, base string) {
	t.Helper()
	var mems []api.MemoryIn
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 40 {
		tm := day.Add(time.Duration(i) * 36 * time.Hour)
		mems = append(mems, api.MemoryIn{ID: fmt.Sprintf("m%02d", i), Text: fmt.Sprintf("%s (note %d)", detDocs[i%len(detDocs)]+" "+detDocs[(i*3+1)%len(detDocs)], i), Time: &tm})
		if strings.TrimSpace(mems[i].Text) == "" {
			mems[i].Text = "empty"
		}
	}
	for _, ns := range []string{"alice", "bob"} {
		b, _ := json.Marshal(api.AddMemoriesRequest{MemoryIn: api.MemoryIn{Namespace: ns}, Memories: mems})
		if r := postJSON(t, base+"/v1/memories", string(b)); r.code != 201 {
			t.Fatalf("seed %s: %d %s", ns, r.code, r.body)
		}
	}
}

var (
	searchPlain = `{"namespace":"alice","query":"Caroline support group","top_k":10}`
	searchAll   = `{"namespace":"alice","query":"Caroline support group","top_k":10,"rerank_depth":20,` +
		`"recency":{"weight":0.3,"half_life":"240h","now":"2025-06-01T00:00:00Z"},"mmr":{"lambda":0.6}}`
)

func checkSearchDeterminism(t *testing.T, url string, exact bool, targets ...string) {
	t.Helper()
	for ti, target := range targets {
		want := canon(t, postJSON(t, url, target))
		var sr api.SearchResponse
		if err := json.Unmarshal([]byte(want), &sr); err != nil || len(sr.Results) < 5 {
			t.Fatalf("target %d: %v %s", ti, err, want)
		}
		for i := range 3 {
			if got := canon(t, postJSON(t, url, target)); got != want {
				t.Errorf("target %d sequential run %d: not byte-identical:\n got %s\nwant %s", ti, i, got, want)
			}
		}
		bodies := make([]string, 16)
		for i := range bodies {
			bodies[i] = target
		}
		// 16 identical at once, then 16 mixed with other searches.
		mixed := []string{target}
		for i := range 15 {
			if i%2 == 0 {
				mixed = append(mixed, target)
			} else {
				mixed = append(mixed, fmt.Sprintf(`{"namespace":"%s","query":"Melanie painted %d camping","top_k":%d}`, []string{"alice", "bob"}[i%4/2], i, 1+i))
			}
		}
		identical, n := 0, 0
		for _, set := range [][]string{bodies, mixed} {
			for i, got := range concurrently(t, url, set) {
				if set[i] != target {
					continue
				}
				n++
				if got == want {
					identical++
					continue
				}
				if exact {
					t.Errorf("target %d concurrent %d: not byte-identical:\n got %s\nwant %s", ti, i, got, want)
				} else if err := sameWithin(got, want, detTol); err != nil {
					t.Errorf("target %d concurrent %d: %v", ti, i, err)
				}
			}
		}
		t.Logf("target %d: %d of %d concurrent answers byte-identical", ti, identical, n)
	}
}

// miniNeural is neuralBackend with a cut-down tokenizer: the tiny model's
// weights and graph, and the Qwen3 tokenizer pipeline with only its 256
// byte tokens (no merges), "yes", "no" and the special tokens. Loading the
// full 11 MB tokenizer twice (write, open) is most of the setup time,
// several times more under the race detector; scoring takes the same
// paths, with more tokens per text.
//
// cacheMB sets the shared-prefix engine's cross-request cache: with it, a
// repeated request reuses its own prefix's K/V, whose float32 sums differ
// from the first run's in the last bits, so byte-for-byte checks of
// sequential runs need it off (0).
func miniNeural(t *testing.T, sc scheduler.Config, cacheMB int) *scoring.Neural {
	t.Helper()
	src := testenv.TokenizerDir()
	out := testenv.MiniTokenizer(t, src)
	tokDir := filepath.Join(t.TempDir(), "tok")
	if err := os.MkdirAll(tokDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(src, "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.WriteFile(filepath.Join(tokDir, "tokenizer.json"), out, 0o644),
		os.WriteFile(filepath.Join(tokDir, "tokenizer_config.json"), cfg, 0o644)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := folder.WriteTestModel(dir, arch.Tiny(), 5, folder.BuildOptions{Tokenizer: tokDir}); err != nil {
		t.Fatal(err)
	}
	o := model.DefaultOptions()
	o.RuntimeLib, o.PrefixCacheMB = testenv.ORTLib(), cacheMB
	s, _, err := model.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := scheduler.New(s.Engine(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return scoring.NewNeural("tiny-test", s, sched, o.Scorer.Prompt.MaxLength)
}

// TestDeterminismPrefixCache: with the cross-request prefix cache (the
// default), a repeated request agrees with its first run within detTol
// (the first computes its prefix, later ones reuse it), and the repeats,
// which all take the cached route, agree byte for byte.
func TestDeterminismPrefixCache(t *testing.T) {
	b := miniNeural(t, scheduler.DefaultConfig(), 64)
	url := startMemory(t, DefaultConfig(), b, retrieval.DefaultConfig()) + "/rerank"
	target := detRerankBody("What did Caroline do at the support group?", detDocs, `,"return_documents":true,"top_n":6`)
	first := canon(t, postJSON(t, url, target))
	second := canon(t, postJSON(t, url, target))
	if err := sameWithin(second, first, detTol); err != nil {
		t.Errorf("cached repeat vs first run: %v", err)
	}
	for i := range 3 {
		if got := canon(t, postJSON(t, url, target)); got != second {
			t.Errorf("repeat %d: not byte-identical to the first repeat:\n got %s\nwant %s", i, got, second)
		}
	}
}

// TestDeterminismTinyModel: the ONNX backend through the real scheduler,
// which batches pairs across requests, gives every (query, document) pair
// the same score (within detTol) whatever it is batched with: alone, in
// its own request, 16 identical requests at once, mixed with other
// requests; and /v1/search reranked by it is as stable.
func TestDeterminismTinyModel(t *testing.T) {
	sc := scheduler.DefaultConfig()
	// Let unequal lengths share batches, so padding varies between runs.
	sc.MaxPadRatio, sc.MaxWait = 8, 5*time.Millisecond
	b := miniNeural(t, sc, 0)
	base := startMemory(t, DefaultConfig(), b, retrieval.DefaultConfig())
	url := base + "/rerank"
	checkRerankDeterminism(t, url, false)

	// Each document scored alone (a batch of one, no padding) scores as it
	// does among the others: probabilities within detTol, raw logits
	// (float32, magnitude ~1) within detLogitTol.
	const q = "What did Caroline do at the support group?"
	for _, raw := range []bool{false, true} {
		extra, tol := "", detTol
		if raw {
			extra, tol = `,"raw_scores":true`, detLogitTol
		}
		var all api.RerankResponse
		decodeInto(t, postJSON(t, url, detRerankBody(q, detDocs, extra)), &all)
		for _, res := range all.Results {
			var one api.RerankResponse
			decodeInto(t, postJSON(t, url, detRerankBody(q, detDocs[res.Index:res.Index+1], extra)), &one)
			d := math.Abs(one.Results[0].RelevanceScore - res.RelevanceScore)
			if d > tol {
				t.Errorf("document %d (raw %v): %.9f alone, %.9f among the others (diff %.3g)", res.Index, raw, one.Results[0].RelevanceScore, res.RelevanceScore, d)
			}
			if !raw {
				maxDiff.Lock()
				maxDiff.v = max(maxDiff.v, d)
				maxDiff.Unlock()
			}
		}
	}

	seedDetMemories(t, base)
	checkSearchDeterminism(t, base+"/v1/search", false, searchAll)
	t.Logf("largest score difference seen: %.3g (tolerance %g)", maxDiff.v, detTol)
}
