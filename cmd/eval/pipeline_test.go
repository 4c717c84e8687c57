package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/retrieval/lexrank"
	"github.com/rerankd/rerankd/retrieval/post"
)

func TestParsePipeline(t *testing.T) {
	tests := []struct {
		in      string
		want    pipelineSpec
		wantErr string
	}{
		{"bm25", pipelineSpec{base: "bm25"}, ""},
		{"Hybrid+Rerank+MMR", pipelineSpec{base: "hybrid", rerank: true, mmr: true}, ""},
		{"dense+recency", pipelineSpec{base: "dense", recency: true}, ""},
		{"rerank", pipelineSpec{}, "base must be"},
		{"bm25+magic", pipelineSpec{}, "unknown stage"},
		{"bm25+mmr+mmr", pipelineSpec{}, "twice"},
		{"", pipelineSpec{}, "base must be"},
	}
	for _, tc := range tests {
		got, err := parsePipeline(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestServiceBM25MatchesDirect: the server's retrieval.Service, run as the
// bm25 pipeline, must rank exactly like the direct per-conversation BM25
// path (same formula, same IDF over the conversation).
func TestServiceBM25MatchesDirect(t *testing.T) {
	data := testenv.LoCoMoOr(t, fixtures)
	ds, err := locomo.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	qrels := metrics.Qrels(ds.Qrels(locomo.UnitTurn))
	// No depth cut: at a cut, ties are kept in a different order (trec_eval's
	// docid order there, the index's ID order here).
	const all = 100000
	direct, _ := bm25Run(ds, locomo.UnitTurn, lexical.Default(), all, qrels, io.Discard)
	o := pipelineOptions{depth: all, fusion: post.DefaultFusionConfig(), recency: post.DefaultRecencyConfig(), mmr: post.DefaultMMRConfig(), ranking: lexrank.PlainBM25()}
	viaService, _, err := servicePipeline(context.Background(), ds, locomo.UnitTurn, pipelineSpec{base: "bm25"}, o, models{}, qrels, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The direct path ranks every memory, zero scores included, down to
	// the depth; the index returns only memories sharing a term with the
	// question. Compare on the matching ones.
	for q, list := range direct {
		kept := list[:0]
		for _, r := range list {
			if r.Score > 0 {
				kept = append(kept, r)
			}
		}
		direct[q] = kept
	}
	a, _, err := metrics.Evaluate(qrels, direct)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := metrics.Evaluate(qrels, viaService)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.MAP-b.MAP) > 1e-9 || math.Abs(a.NDCG10-b.NDCG10) > 1e-9 || a.Queries != b.Queries {
		t.Fatalf("direct %+v\nservice %+v", a, b)
	}
	t.Logf("MAP %.4f NDCG@10 %.4f over %d queries, both paths", a.MAP, a.NDCG10, a.Queries)
}

// TestLocomoStagesRun: the stages that need no model run end to end and
// report their pipeline name; those that need one exit 2 and say so.
func TestLocomoStagesRun(t *testing.T) {
	for _, tc := range []struct {
		pipeline string
		code     int
		msg      string
	}{
		{"bm25+recency+mmr", exitOK, ""},
		{"hybrid", exitUsage, "--embed-model"},
		{"dense+rerank", exitUsage, "--embed-model"},
		{"bm25+rerank", exitUsage, "--model DIR"},
		{"bm25+unknown", exitUsage, "unknown stage"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"locomo", "--data", fixtures, "--json", "--pipeline", tc.pipeline}, &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%s: exit %d (%s), want %d with %q", tc.pipeline, code, errb.String(), tc.code, tc.msg)
			continue
		}
		if code == exitOK {
			var res struct{ Pipeline string }
			if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Pipeline != tc.pipeline {
				t.Errorf("%s: pipeline %q, %v", tc.pipeline, res.Pipeline, err)
			}
		}
	}
}

// TestLocomoNeuralPipelines is a code-path test of every neural stage: a
// generated tiny embedding model and a tiny reranker (random weights, so
// the metrics are meaningless and not checked) run hybrid, dense and
// +rerank+recency+mmr end to end on the fixtures.
func TestLocomoNeuralPipelines(t *testing.T) {
	testenv.Require(t, testenv.ORTLib())
	testenv.Require(t, testenv.TokenizerDir())
	bo := folder.BuildOptions{Tokenizer: testenv.TokenizerDir()}
	emb, rr := fixture.EmbeddingModel(t, arch.Tiny(), 3, bo), fixture.Model(t, arch.Tiny(), 7, bo)
	for _, p := range []string{"dense", "hybrid", "hybrid+rerank+recency+mmr"} {
		t.Run(p, func(t *testing.T) {
			runFile := filepath.Join(t.TempDir(), "run.txt")
			var out, errb bytes.Buffer
			code := run([]string{"locomo", "--data", fixtures, "--json", "--pipeline", p, "--embed-model", emb, "--model", rr,
				"--ort-lib", testenv.ORTLib(), "--tokenizer", testenv.TokenizerDir(), "--rerank-depth", "5", "--run", runFile}, &out, &errb)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var res struct {
				Pipeline string
				Summary  map[string]float64
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Pipeline != p || res.Summary["queries"] < 1 {
				t.Fatalf("result %s: %v", out.String(), err)
			}
			f, err := os.Open(runFile)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			runs, err := metrics.ReadRun(f)
			if err != nil || len(runs) == 0 {
				t.Fatalf("run file: %v", err)
			}
			for q, list := range runs {
				if strings.Contains(p, "rerank") && len(list) > 5 {
					t.Fatalf("%s: %d results, rerank depth is 5", q, len(list))
				}
			}
		})
	}
}
