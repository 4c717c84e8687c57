package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/benchmarks/locomo"
	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
)

// benchModelEnv names a reranker folder for the eval benchmarks (a real
// model); unset, they generate one: random weights, Qwen3's vocabulary,
// 4 layers of 256 (their speed, not their scores, is the point).
const benchModelEnv = "RERANKD_EVAL_BENCH_MODEL"

// benchSetup is the benchmarks' shared world: the model folder, a served
// rerankd on it and the data.
var benchSetup struct {
	once           sync.Once
	dir, url, data string
	err            error
	cleanup        []func()
}

func evalBench(b *testing.B) (dir, url, data string) {
	b.Helper()
	testenv.Require(b, testenv.ORTLib())
	testenv.Require(b, testenv.TokenizerDir())
	s := &benchSetup
	s.once.Do(func() {
		s.dir = os.Getenv(benchModelEnv)
		if s.dir == "" {
			tmp, err := os.MkdirTemp("", "rerankd-eval-bench-")
			if err != nil {
				s.err = err
				return
			}
			s.cleanup = append(s.cleanup, func() { _ = os.RemoveAll(tmp) })
			c := arch.Tiny()
			c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, c.IntermediateSize = 256, 4, 4, 2, 64, 768
			s.dir = filepath.Join(tmp, "rr")
			s.err = folder.WriteTestModel(s.dir, c, 11, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
		}
		// One conversation of the dev split when it is there (about 200
		// questions), else the fixtures.
		s.data = fixtures
		if d := os.Getenv(testenv.LoCoMoEnv); d != "" {
			s.data = filepath.Join(d, "26.json")
		}
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	if s.url == "" {
		// The server lives as long as the benchmark that started it;
		// each benchmark function gets its own.
		s.url = serveRerankd(b, s.dir)
		b.Cleanup(func() { s.url = "" })
	}
	return s.dir, s.url, s.data
}

// evalRerank opens the models of one way of evaluating (args: --model
// DIR or --rerank-url URL) once, and returns a function that runs
// `eval locomo --pipeline bm25+rerank`'s pipeline over the data and
// returns the pairs it reranked (the run holds exactly the reranked
// candidates). Opening is left out of the timing: a model folder is
// opened once per run, a server once per life.
func evalRerank(b *testing.B, data string, args ...string) func() int {
	b.Helper()
	all := append([]string{"--data", data, "--pipeline", "bm25+rerank", "--ort-lib", testenv.ORTLib(),
		"--tokenizer", testenv.TokenizerDir()}, args...)
	job, err := parseLocomo(all, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	ds, err := locomo.Load(data)
	if err != nil {
		b.Fatal(err)
	}
	qrels := metrics.Qrels(ds.Qrels(job.unit))
	m, err := openModels(job.spec, job.po)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	return func() int {
		run, _, err := servicePipeline(context.Background(), ds, job.unit, job.spec, job.po, m, qrels, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, r := range run {
			n += len(r)
		}
		return n
	}
}

// inProcessArgs and httpArgs are the two ways of evaluating one model.
func inProcessArgs(dir string) []string { return []string{"--model", dir} }

func httpArgs(url string) []string {
	return []string{"--rerank-url", url, "--no-cache", "--concurrency", "4"}
}

// benchPairs runs eval b.N times and reports pairs/s.
func benchPairs(b *testing.B, eval func() int) {
	var pairs int
	start := time.Now()
	for b.Loop() {
		pairs += eval()
	}
	b.ReportMetric(float64(pairs)/time.Since(start).Seconds(), "pairs/s")
}

// BenchmarkEvalRerank_InProcess: `eval locomo --pipeline bm25+rerank
// --model DIR`, the reranker in process.
func BenchmarkEvalRerank_InProcess(b *testing.B) {
	dir, _, data := evalBench(b)
	benchPairs(b, evalRerank(b, data, inProcessArgs(dir)...))
}

// BenchmarkEvalRerank_HTTP: the same evaluation through a served rerankd
// (its Cohere route) with 4 requests in flight, no cache.
func BenchmarkEvalRerank_HTTP(b *testing.B) {
	_, url, data := evalBench(b)
	benchPairs(b, evalRerank(b, data, httpArgs(url)...))
}

// BenchmarkEvalRerank_Ratio alternates the two within one run (the
// machine is shared: only a same-run ratio means anything) and reports
// HTTP pairs/s over in-process pairs/s; the target is >= 0.9.
func BenchmarkEvalRerank_Ratio(b *testing.B) {
	dir, url, data := evalBench(b)
	inProc, overHTTP := evalRerank(b, data, inProcessArgs(dir)...), evalRerank(b, data, httpArgs(url)...)
	var inTime, httpTime time.Duration
	var inPairs, httpPairs int
	for b.Loop() {
		t0 := time.Now()
		inPairs += inProc()
		t1 := time.Now()
		httpPairs += overHTTP()
		inTime, httpTime = inTime+t1.Sub(t0), httpTime+time.Since(t1)
	}
	in, ht := float64(inPairs)/inTime.Seconds(), float64(httpPairs)/httpTime.Seconds()
	b.ReportMetric(in, "inprocess-pairs/s")
	b.ReportMetric(ht, "http-pairs/s")
	b.ReportMetric(ht/in, "http/inprocess")
}
