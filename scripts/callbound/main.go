//go:build ignore

// Command callbound (go run scripts/callbound/main.go -model DIR) times a
// cross-encoder folder's scorer with and without the engine's bound on a
// call's attention scores (model.Options.EncoderScoresBytes), the two
// opened in one process and taking turns request by request on the same
// requests, and prints how fast the bounded side scores against the other
// and the largest logit difference. ONNX Runtime is $ORT_LIB (what
// scripts/setup.sh prints) unless -ort-lib names it. A lab tool for
// docs/perf/encoders-memory.md; errors panic.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/rerank"
)

func main() {
	dir := flag.String("model", "", "cross-encoder folder")
	requests := flag.Int("requests", 60, "timed requests")
	docs := flag.Int("docs", 20, "documents per request")
	minW, maxW := flag.Int("min-words", 35, "fewest words a document"), flag.Int("max-words", 80, "most words a document")
	threads := flag.Int("threads", 2, "ONNX Runtime intra-op threads")
	ortLib := flag.String("ort-lib", os.Getenv("ORT_LIB"), "ONNX Runtime library (default $ORT_LIB)")
	flag.Parse()
	if *ortLib == "" {
		fmt.Fprintln(os.Stderr, `callbound: no ONNX Runtime library: pass -ort-lib, or eval "$(scripts/setup.sh)" and export ORT_LIB`)
		os.Exit(2)
	}
	words := strings.Fields("the quick brown fox jumps over a lazy dog while alice tells bob about her trip to paris last summer and the weather was fine on tuesday but it rained on wednesday")
	r := rand.New(rand.NewPCG(1, 2))
	reqs := make([]rerank.Request, *requests+1) // the first warms both up
	for i := range reqs {
		reqs[i].Query = "what did alice say about her trip to paris"
		for range *docs {
			var b []string
			for range *minW + r.IntN(*maxW-*minW+1) {
				b = append(b, words[r.IntN(len(words))])
			}
			reqs[i].Docs = append(reqs[i].Docs, strings.Join(b, " "))
		}
	}
	open := func(bound int64) *rerank.Scorer {
		o := model.DefaultOptions()
		o.RuntimeLib, o.Session.IntraOpThreads, o.EncoderScoresBytes = *ortLib, *threads, bound
		s, _, err := model.Open(*dir, o)
		if err != nil {
			panic(err)
		}
		return s
	}
	plain, bounded := open(0), open(model.DefaultEncoderScoresBytes)
	defer plain.Close()
	defer bounded.Close()
	p, err := plain.Prompts(reqs[0])
	if err != nil {
		panic(err)
	}
	tokens := 0
	for _, x := range p {
		tokens += len(x.IDs)
	}
	fmt.Printf("engine calls per request: %d without the bound, %d with it; %d tokens a pair\n",
		len(plain.Batches(p)), len(bounded.Batches(p)), tokens/len(p))
	run := func(s *rerank.Scorer, r rerank.Request) ([]rerank.Score, time.Duration) {
		t0 := time.Now()
		out, err := s.Score(context.Background(), r)
		if err != nil {
			panic(err)
		}
		return out, time.Since(t0)
	}
	run(plain, reqs[0])
	run(bounded, reqs[0])
	var tp, tb time.Duration
	var ratios []float64
	diff := 0.0
	for i, r := range reqs[1:] {
		var a, b []rerank.Score
		var da, db time.Duration
		if i%2 == 0 { // which goes first alternates
			a, da = run(plain, r)
			b, db = run(bounded, r)
		} else {
			b, db = run(bounded, r)
			a, da = run(plain, r)
		}
		tp, tb = tp+da, tb+db
		ratios = append(ratios, float64(da)/float64(db))
		for j := range a {
			diff = math.Max(diff, math.Abs(a[j].Logit-b[j].Logit))
		}
	}
	slices.Sort(ratios)
	fmt.Printf("pairs/s with the bound over without: %.3f (median per request %.3f), %d requests; max logit difference %.2g\n",
		float64(tp)/float64(tb), ratios[len(ratios)/2], *requests, diff)
}
