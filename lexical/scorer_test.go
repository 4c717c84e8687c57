package lexical

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestDefaultConfigValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	if Default().Config() != DefaultConfig() {
		t.Fatal("Default() does not use DefaultConfig()")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		mod   func(*Config)
		wants []string // substrings, one per expected problem
	}{
		{"ok", func(*Config) {}, nil},
		{"k1 zero ok, b bounds ok", func(c *Config) { c.K1, c.B = 0, 1 }, nil},
		{"negative k1", func(c *Config) { c.K1 = -1 }, []string{"lexical: k1 "}},
		{"inf k1", func(c *Config) { c.K1 = math.Inf(1) }, []string{"lexical: k1 "}},
		{"k1 above max", func(c *Config) { c.K1 = MaxK1 + 1 }, []string{"lexical: k1 "}},
		{"b above 1", func(c *Config) { c.B = 1.5 }, []string{"lexical: b "}},
		{"saturation 1", func(c *Config) { c.Saturation = 1 }, []string{"Saturation"}},
		{"margin 0", func(c *Config) { c.Margin = 0 }, []string{"Margin"}},
		{"zero value: every field", func(c *Config) { *c = Config{B: math.NaN()} }, []string{"lexical: b ", "Saturation", "Margin"}},
		{"all four at once", func(c *Config) {
			*c = Config{K1: math.NaN(), B: -0.1, Saturation: math.NaN(), Margin: 0.5}
		}, []string{"lexical: k1 ", "lexical: b ", "Saturation", "Margin"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mod(&c)
			err := c.Validate()
			if len(tc.wants) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %d problems", len(tc.wants))
			}
			var joined interface{ Unwrap() []error }
			if !errors.As(err, &joined) || len(joined.Unwrap()) != len(tc.wants) {
				t.Errorf("Validate() = %v, want %d problems", err, len(tc.wants))
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, missing %q", err, w)
				}
			}
			if s, err2 := New(c); s != nil || err2 == nil {
				t.Errorf("New accepted an invalid config")
			}
		})
	}
}

// TestBM25HandComputed checks raw BM25 and the mapping against arithmetic
// done by hand, with K1 = 1.2, B = 0.75, Saturation = 0.99, Margin = 1e-6.
//
// Query "cat dog" → terms {cat, dog}.
// D1 "cat sat"              → [cat sat]               dl = 2
// D2 "Dog chased cats, cat" → [dog chase cat cat]     dl = 4
// D3 "fish swim"            → [fish swim]             dl = 2
// N = 3, avgdl = 8/3.
//
// IDF (Lucene): log(1 + (N - n + 0.5)/(n + 0.5))
//
//	cat: n = 2 → log(1 + 1.5/2.5) = log(1.6)  = 0.470003629
//	dog: n = 1 → log(1 + 2.5/1.5) = log(8/3)  = 0.980829253
//
// Length norm L = 1 - B + B·dl/avgdl:
//
//	D1: 0.25 + 0.75·2/(8/3) = 0.8125 ; K1·L = 0.975
//	D2: 0.25 + 0.75·4/(8/3) = 1.375  ; K1·L = 1.65
//
// tf factor tf·(K1+1)/(tf + K1·L):
//
//	D1 cat (tf 1): 2.2/1.975      = 1.113924051 → 0.470003629·1.113924051 = 0.523548347
//	D2 cat (tf 2): 4.4/3.65       = 1.205479452 → 0.470003629·1.205479452 = 0.566579717
//	D2 dog (tf 1): 2.2/2.65       = 0.830188679 → 0.980829253·0.830188679 = 0.814273342
//	D2 raw = 0.566579717 + 0.814273342 = 1.380853059
//	D3 raw = 0
//
// Max attainable: (K1+1)·(0.470003629 + 0.980829253) = 2.2·1.450832882 = 3.191832341
// Score = m + (1-2m)·(1 - 0.01^(raw/max)), m = 1e-6:
//
//	D1: x = 0.523548347/3.191832341 = 0.164027521 → 1 - 0.01^x = 0.530165 → 0.530165381
//	D2: x = 1.380853059/3.191832341 = 0.432620800 → 1 - 0.01^x = 0.863617 → 0.863616850
//	D3: 1e-6
func TestBM25HandComputed(t *testing.T) {
	docs := []string{"cat sat", "Dog chased cats, cat", "fish swim"}
	want := []Result{
		{Raw: 0.523548347, Score: 0.530165381, Tokens: 2},
		{Raw: 1.380853059, Score: 0.863616850, Tokens: 4},
		{Raw: 0, Score: 1e-6, Tokens: 2},
	}
	got := Default().Score("cat dog", docs)
	if len(got) != len(want) {
		t.Fatalf("len = %d, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Tokens != want[i].Tokens ||
			math.Abs(got[i].Raw-want[i].Raw) > 1e-8 ||
			math.Abs(got[i].Score-want[i].Score) > 1e-8 {
			t.Errorf("doc %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[2].Score != 1e-6 {
		t.Errorf("non-matching doc score = %v, want exactly Margin", got[2].Score)
	}
}

func argmax(rs []Result) int {
	best := 0
	for i, r := range rs {
		if r.Score > rs[best].Score {
			best = i
		}
	}
	return best
}

func TestRanking(t *testing.T) {
	tests := []struct {
		name  string
		query string
		docs  []string
		first int   // index expected to rank first
		zero  []int // indexes expected at the floor (no match)
	}{
		{"term match ranks first", "solar panel efficiency",
			[]string{"The history of the Roman empire.", "Improving solar panel efficiency with coatings.", "Solar eclipses explained."}, 1, []int{0}},
		{"stemming painted matches paint", "painted",
			[]string{"a dog in the park", "how to paint a fence"}, 1, []int{0}},
		{"stemming painting matches paint", "painting",
			[]string{"how to paint a fence", "a dog in the park"}, 0, []int{1}},
		{"stopwords ignored", "the history of rome",
			[]string{"the of the of the of and the a", "rome"}, 1, []int{0}},
		{"case-insensitive", "NEURAL networks",
			[]string{"Cooking pasta", "neural Networks for ranking"}, 1, []int{0}},
		{"more query terms beat fewer", "fast red car",
			[]string{"red car", "fast red car", "red"}, 1, nil},
		{"rare term beats common term", "the quick zebra",
			[]string{"quick quick", "zebra", "quick brown fox", "quick lazy dog"}, 1, nil},
		{"shorter doc wins at equal tf", "kernel",
			[]string{"kernel " + strings.Repeat("filler words here ", 20), "kernel panic"}, 1, nil},
		{"all-stopword query still ranks", "The Who",
			[]string{"a concert", "the who played live", "who"}, 1, []int{0}},
		{"chinese: 我喜欢画画", "我喜欢画画",
			[]string{"今天天气很好", "他也喜欢画画和唱歌", "我喜欢唱歌"}, 1, []int{0}},
		{"chinese: 画画 only", "画画",
			[]string{"我喜欢唱歌", "画画是我的爱好"}, 1, []int{0}},
		{"japanese", "日本語の勉強",
			[]string{"英語の本", "日本語を勉強する"}, 1, nil},
		{"korean", "한국어 공부",
			[]string{"영어 공부", "한국어 공부 방법"}, 1, nil},
		{"mixed cjk latin", "GPU加速",
			[]string{"CPU计算", "使用GPU加速推理", "gpu drivers"}, 1, []int{0}},
		{"latin query in cjk doc", "Transformer",
			[]string{"卷积网络", "Transformer模型结构"}, 1, []int{0}},
		{"accents and case", "CAFÉ",
			[]string{"cafe", "un café noir"}, 1, []int{0}},
	}
	s := Default()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := s.Score(tc.query, tc.docs)
			if got := argmax(rs); got != tc.first {
				t.Errorf("first = %d (%q), want %d (%q); results %+v",
					got, tc.docs[got], tc.first, tc.docs[tc.first], rs)
			}
			for _, z := range tc.zero {
				if rs[z].Score != s.Config().Margin || rs[z].Raw != 0 {
					t.Errorf("doc %d = %+v, want the floor", z, rs[z])
				}
			}
			if !(rs[tc.first].Score > s.Config().Margin) {
				t.Errorf("first doc %d has the floor score", tc.first)
			}
		})
	}
}

func TestMappingMonotonic(t *testing.T) {
	s := Default()
	const maxRaw = 3.0
	prev := -1.0
	for i := 0; i <= 3000; i++ {
		raw := float64(i) / 1000
		v := s.mapScore(raw, maxRaw)
		if !(v > prev) {
			t.Fatalf("mapScore(%v) = %v not > previous %v", raw, v, prev)
		}
		prev = v
	}
	if got := s.mapScore(0, maxRaw); got != 1e-6 {
		t.Errorf("mapScore(0) = %v, want 1e-6", got)
	}
	if got := s.mapScore(maxRaw, maxRaw); math.Abs(got-(1e-6+(1-2e-6)*0.99)) > 1e-12 {
		t.Errorf("mapScore(max) = %v, want ≈0.99", got)
	}
	for _, c := range [][2]float64{{math.NaN(), 1}, {1, math.NaN()}, {math.Inf(1), 1}, {1, 0}, {-1, 1}, {5, 1}} {
		if v := s.mapScore(c[0], c[1]); !(v >= 1e-6 && v <= 1-1e-6) {
			t.Errorf("mapScore(%v, %v) = %v out of range", c[0], c[1], v)
		}
	}

	// Within a request, ordering by Score agrees with ordering by Raw.
	docs := []string{"apple", "apple apple banana", "banana", "cherry", "apple banana cherry",
		"apple apple apple apple", "banana banana", "nothing here", strings.Repeat("apple ", 50)}
	rs := s.Score("apple banana cherry", docs)
	for i := range rs {
		for j := range rs {
			if rs[i].Raw < rs[j].Raw && !(rs[i].Score < rs[j].Score) {
				t.Errorf("raw %v < %v but score %v >= %v", rs[i].Raw, rs[j].Raw, rs[i].Score, rs[j].Score)
			}
		}
	}
}

// edgeCases are request shapes that must never break the bounds; the fuzz
// target is seeded from them too.
func edgeCases() []struct {
	name  string
	query string
	docs  []string
} {
	oneMB := strings.Repeat("lorem ipsum dolor sit amet 画画 ", 1<<20/32)
	return []struct {
		name  string
		query string
		docs  []string
	}{
		{"empty query", "", []string{"a doc", "another"}},
		{"no docs", "query", nil},
		{"empty docs", "query", []string{"", "", ""}},
		{"one empty doc", "query", []string{""}},
		{"whitespace", " \t\n", []string{"  ", "\n\n", "word"}},
		{"punctuation only", "?!.", []string{"...", "!!!", "—"}},
		{"stopwords only doc", "kernel", []string{"the and of", "kernel"}},
		{"single doc match", "kernel", []string{"kernel"}},
		{"single doc no match", "kernel", []string{"panic"}},
		{"duplicates", "red car", []string{"red car", "red car", "red car"}},
		{"10000 identical docs", "red car", slices.Repeat([]string{"a red car"}, 10000)},
		{"1MB document", "dolor 画画", []string{oneMB, "dolor"}},
		{"1MB query", oneMB, []string{"dolor", "amet"}},
		{"invalid utf8", "caf\xe9 \xff\xfe", []string{"caf\xe9", "\xc3\x28", "\xed\xa0\x80", "café"}},
		{"nul and controls", "a\x00b", []string{"\x00\x01\x02", "a b"}},
		{"huge tf", "x", []string{strings.Repeat("x ", 200000)}},
	}
}

func checkBounds(t *testing.T, s *Scorer, query string, docs []string) []Result {
	t.Helper()
	rs := s.Score(query, docs)
	if len(rs) != len(docs) {
		t.Fatalf("len(results) = %d, want %d", len(rs), len(docs))
	}
	for i, r := range rs {
		if math.IsNaN(r.Score) || !(r.Score > 0 && r.Score < 1) {
			t.Fatalf("doc %d: score %v not in (0,1)", i, r.Score)
		}
		if math.IsNaN(r.Raw) || math.IsInf(r.Raw, 0) || r.Raw < 0 {
			t.Fatalf("doc %d: raw %v not finite and >= 0", i, r.Raw)
		}
		if r.Tokens < 0 {
			t.Fatalf("doc %d: tokens %d", i, r.Tokens)
		}
	}
	return rs
}

func TestBounds(t *testing.T) {
	configs := map[string]Config{
		"default":      DefaultConfig(),
		"k1=0 b=0":     {K1: 0, B: 0, Saturation: 0.5, Margin: 1e-12},
		"b=1 large k1": {K1: 100, B: 1, Saturation: 0.999999, Margin: 0.01},
		"tiny sat":     {K1: 1.2, B: 0.75, Saturation: 1e-300, Margin: 1e-6},
		"k1 max":       {K1: MaxK1, B: 0.5, Saturation: 0.9, Margin: 1e-6},
	}
	for cname, cfg := range configs {
		s, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", cname, err)
		}
		for _, tc := range edgeCases() {
			t.Run(cname+"/"+tc.name, func(t *testing.T) {
				checkBounds(t, s, tc.query, tc.docs)
			})
		}
	}
}

func TestEdgeSemantics(t *testing.T) {
	s := Default()
	if rs := s.Score("query", nil); rs == nil || len(rs) != 0 {
		t.Errorf("Score(nil docs) = %#v, want empty non-nil", rs)
	}
	for _, r := range s.Score("", []string{"a doc", "doc"}) {
		if r.Score != 1e-6 || r.Raw != 0 {
			t.Errorf("empty query: %+v, want floor", r)
		}
	}
	// A single matching document still gets a real score.
	if r := s.Score("kernel", []string{"kernel panic"})[0]; !(r.Raw > 0 && r.Score > 0.5) {
		t.Errorf("single doc: %+v, want a positive raw and score > 0.5", r)
	}
	// Duplicates score identically, also when word order differs.
	rs := s.Score("red fast car", []string{"red fast car", "car fast red", "red fast car", "blue"})
	if rs[0] != rs[1] || rs[0] != rs[2] {
		t.Errorf("duplicates differ: %+v", rs)
	}
	// 10,000 identical docs: every term is in every document, IDF stays
	// positive, all equal.
	rs = s.Score("red car", slices.Repeat([]string{"a red car"}, 10000))
	if !(rs[0].Raw > 0) || rs[0] != rs[9999] {
		t.Errorf("identical docs: %+v vs %+v", rs[0], rs[9999])
	}
}

func TestDeterministicAndConcurrent(t *testing.T) {
	s := Default()
	docs := benchDocs(100)
	q := "distributed database replication latency"
	want := s.Score(q, docs)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 4 {
		wg.Go(func() {
			for range 3 {
				if got := s.Score(q, docs); !slices.Equal(got, want) {
					errs <- "results differ between calls"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

var benchVocab = strings.Fields(`database replication latency distributed consensus raft paxos
leader follower log snapshot network partition throughput storage engine index query planner
cache eviction memory disk write read commit transaction isolation lock contention shard
cluster node failover heartbeat timeout client server request response batch stream`)

// benchDocs builds n deterministic ~60-word documents.
func benchDocs(n int) []string {
	docs := make([]string, n)
	x := uint32(12345)
	for i := range docs {
		var b strings.Builder
		for w := range 60 {
			x = x*1664525 + 1013904223
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(benchVocab[int(x>>16)%len(benchVocab)])
			if x%7 == 0 {
				b.WriteString("ing the")
			}
		}
		docs[i] = b.String()
	}
	return docs
}

func BenchmarkScore_100Docs(b *testing.B) {
	s := Default()
	docs := benchDocs(100)
	bytes := 0
	for _, d := range docs {
		bytes += len(d)
	}
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	for b.Loop() {
		s.Score("how does raft leader election handle network partitions", docs)
	}
}

func ExampleScorer_Score() {
	s := Default()
	for _, r := range s.Score("painted fences", []string{
		"How to paint a fence in one afternoon",
		"A history of the fence",
		"Cooking pasta",
	}) {
		fmt.Printf("%.6f %.3f %d\n", r.Score, r.Raw, r.Tokens)
	}
	// Output:
	// 0.813759 1.165 8
	// 0.492430 0.470 5
	// 0.000001 0.000 2
}
