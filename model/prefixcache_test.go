package model

import (
	"math"
	"strings"
	"sync"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
)

func openShared(t *testing.T, dir string, cacheMB int) (*rerank.Scorer, *PrefixSession) {
	t.Helper()
	o := DefaultOptions()
	o.RuntimeLib, o.PrefixCacheMB = testenv.ORTLib(), cacheMB
	o.Session.IntraOpThreads = 2
	s, info, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ps, ok := s.Engine().(*PrefixSession)
	if !ok || !info.SharedPrefix || info.PrefixCache != (cacheMB > 0) {
		t.Fatalf("engine %T, info %+v: want the shared-prefix engine, cache %v", s.Engine(), info, cacheMB > 0)
	}
	return s, ps
}

// TestPrefixCacheMatches: with the cross-request cache, requests that share
// the system prompt (and instruction, and the whole prefix when a query
// repeats) reuse it, and every score stays within 1e-5 of the plain graph
// and of the same engine without the cache, sequentially and with requests
// running concurrently.
func TestPrefixCacheMatches(t *testing.T) {
	dir := tinyModel(t, onnx.HeadLogit, true)
	cfg := rerank.DefaultScorerConfig()
	plain := openPlain(t, dir, cfg)
	cached, ps := openShared(t, dir, 64)
	uncached, _ := openShared(t, dir, 0)
	docs := append(mixedDocs(9), "x", strings.Repeat("a long memory ", 40))
	reqs := []struct {
		name  string
		r     rerank.Request
		reuse string // what the cache must have served: "" none, "some" the system prompt at least, "all" the prefix but one token
	}{
		{"first", rerank.Request{Query: query, Docs: docs}, ""},
		{"other query, same instruction", rerank.Request{Query: "Who adopted a cat?", Docs: docs[:5]}, "some"},
		{"same query again", rerank.Request{Query: query, Docs: docs[3:]}, "all"},
		{"other instruction", rerank.Request{Instruction: "Find memories about hobbies", Query: "What does Melanie paint?", Docs: docs}, "some"},
		{"context turns", rerank.Request{Query: "When was that?", Context: []string{"Caroline: I went to a support group."}, Docs: docs[:4]}, "some"},
	}
	want := make([][]rerank.Score, len(reqs))
	for i, rq := range reqs {
		want[i] = scoreAll(t, plain, rq.r)
		before, _ := ps.CacheStats()
		got := scoreAll(t, cached, rq.r)
		after, _ := ps.CacheStats()
		off := scoreAll(t, uncached, rq.r)
		for j := range want[i] {
			if d := math.Abs(got[j].Logit - want[i][j].Logit); d > sharedPrefixTol {
				t.Errorf("%s doc %d: cached logit %.7f, plain %.7f", rq.name, j, got[j].Logit, want[i][j].Logit)
			}
			if d := math.Abs(got[j].Logit - off[j].Logit); d > sharedPrefixTol {
				t.Errorf("%s doc %d: cached logit %.7f, uncached %.7f", rq.name, j, got[j].Logit, off[j].Logit)
			}
		}
		reused := after.ReusedTokens - before.ReusedTokens
		computed := after.ComputedTokens - before.ComputedTokens
		if after.Lookups-before.Lookups != 1 {
			t.Errorf("%s: %d cache lookups, want 1 (one ORT call)", rq.name, after.Lookups-before.Lookups)
		}
		switch rq.reuse {
		case "":
			if reused != 0 {
				t.Errorf("%s: reused %d tokens from an empty cache", rq.name, reused)
			}
		case "some":
			if reused < 20 || computed < 2 { // the system prompt alone is ~30 tokens
				t.Errorf("%s: reused %d, computed %d prefix tokens", rq.name, reused, computed)
			}
		case "all":
			if computed != 1 || reused < 40 {
				t.Errorf("%s: reused %d, computed %d prefix tokens; want all but one reused", rq.name, reused, computed)
			}
		}
		if after.Bytes > after.MaxBytes || after.Entries < 1 {
			t.Errorf("%s: cache %+v", rq.name, after)
		}
	}

	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for round := range 3 {
		for i, rq := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := cached.Score(t.Context(), rq.r)
				if err != nil {
					errs <- err.Error()
					return
				}
				for j := range got {
					if d := math.Abs(got[j].Logit - want[i][j].Logit); d > sharedPrefixTol {
						errs <- rq.name + ": concurrent logit differs"
						return
					}
				}
				_ = round
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestPrefixSessionIO: the current graph (past/present K/V) and the one
// written before it (no K/V) are accepted; anything else is refused with a
// message naming what was expected.
func TestPrefixSessionIO(t *testing.T) {
	in := func(names ...string) []ort.InputOutputInfo {
		var out []ort.InputOutputInfo
		for _, n := range names {
			d := ort.NewShape(-1)
			if n == onnx.PastKey || n == onnx.PastValue {
				d = ort.NewShape(28, 8, -1, 128)
			}
			out = append(out, ort.InputOutputInfo{Name: n, Dimensions: d})
		}
		return out
	}
	base := []string{onnx.PrefixIDs, onnx.PackedIDs, onnx.PackedMask}
	past := append(append([]string{}, base...), onnx.PastKey, onnx.PastValue)
	for _, tc := range []struct {
		name     string
		ins      []ort.InputOutputInfo
		outs     []string
		ok, kv   bool
		errMatch string
	}{
		{"current", in(past...), []string{onnx.OutputLogits, onnx.PresentKey, onnx.PresentValue}, true, true, ""},
		{"before past K/V", in(base...), []string{onnx.OutputLogits}, true, false, ""},
		{"past without present", in(past...), []string{onnx.OutputLogits}, false, false, "not a shared-prefix graph"},
		{"plain graph", in(onnx.InputIDs, onnx.AttentionMask), []string{onnx.OutputLogits}, false, false, "not a shared-prefix graph"},
		{"dynamic heads", func() []ort.InputOutputInfo {
			x := in(past...)
			x[3].Dimensions = ort.NewShape(28, -1, -1, 128)
			return x
		}(), []string{onnx.OutputLogits, onnx.PresentKey, onnx.PresentValue}, false, false, "fixed layers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &PrefixSession{}
			_, _, err := s.checkIO(tc.ins, in(tc.outs...))
			if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), tc.errMatch)) {
				t.Fatalf("err %v, want ok=%v (%q)", err, tc.ok, tc.errMatch)
			}
			if s.past != tc.kv || (tc.kv && (s.kvLayers != 28 || s.kvHeads != 8 || s.kvInner != 128 || s.kvOuter != 224)) {
				t.Errorf("past %v, layout %d/%d/%d/%d", s.past, s.kvLayers, s.kvHeads, s.kvInner, s.kvOuter)
			}
		})
	}
}
