package post

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Worked example, cosine path. Three near-duplicates A, B, C and a distinct
// D, lambda 0.7:
//
//	      rel   vector          cos to A  cos to B  cos to D
//	A     0.90  (1, 0, 0)       1         0.96      0
//	B     0.88  (.96, .28, 0)   0.96      1         0
//	C     0.86  (.96, 0, .28)   0.96      0.9216    0.28
//	D     0.60  (0, 0, 1)       0         0         1
//
// Plain top-3 is A, B, C: three phrasings of one fact. MMR:
//
//	step 1: 0.7*rel: A 0.63, B 0.616, C 0.602, D 0.42      → A (0.63)
//	step 2: B 0.616 - 0.3*0.96 = 0.328, C 0.602 - 0.288 = 0.314,
//	        D 0.42 - 0.3*0 = 0.42                           → D (0.42)
//	step 3: B 0.616 - 0.3*max(0.96, 0) = 0.328,
//	        C 0.602 - 0.3*max(0.96, 0.28) = 0.314           → B (0.328)
//	step 4: C 0.602 - 0.3*max(0.96, 0.28, 0.9216) = 0.314   → C (0.314)
var cosineMemories = []Candidate{
	{ID: "C", Score: 0.86, Vector: []float32{0.96, 0, 0.28}},
	{ID: "A", Score: 0.90, Vector: []float32{1, 0, 0}},
	{ID: "D", Score: 0.60, Vector: []float32{0, 0, 1}},
	{ID: "B", Score: 0.88, Vector: []float32{0.96, 0.28, 0}},
}

// Worked example, Jaccard path (no vectors), lambda 0.7:
//
//	A 0.90 "Alice likes green tea"       {alice likes green tea}
//	B 0.85 "alice likes green tea a lot" {alice likes green tea a lot}
//	C 0.80 "Alice LIKES green-tea!"      {alice likes green tea}
//	D 0.60 "Bob moved to Paris in May"   {bob moved to paris in may}
//
//	J(A,B) = 4/6, J(A,C) = 1, J(B,C) = 4/6, J(D,·) = 0
//
//	step 1: A 0.63, B 0.595, C 0.56, D 0.42                 → A (0.63)
//	step 2: B 0.595 - 0.3*(2/3) = 0.395, C 0.56 - 0.3*1 = 0.26,
//	        D 0.42                                          → D (0.42)
//	step 3: B 0.395, C 0.26                                 → B (0.395)
//	step 4: C 0.56 - 0.3*max(1, 0, 2/3) = 0.26              → C (0.26)
var textMemories = []Candidate{
	{ID: "A", Score: 0.90, Text: "Alice likes green tea"},
	{ID: "B", Score: 0.85, Text: "alice likes green tea a lot"},
	{ID: "C", Score: 0.80, Text: "Alice LIKES green-tea!"},
	{ID: "D", Score: 0.60, Text: "Bob moved to Paris in May"},
}

type mmrWant struct {
	id       string
	rel, obj float64
}

func TestMMR(t *testing.T) {
	def := DefaultMMRConfig()
	tests := []struct {
		name  string
		cands []Candidate
		cfg   MMRConfig
		k     int
		want  []mmrWant
	}{
		{
			// lambda 1 is plain relevance: objective = rel.
			name: "plain top-3 picks the duplicates", cands: cosineMemories,
			cfg: MMRConfig{Lambda: 1, Window: 20}, k: 3,
			want: []mmrWant{{"A", 0.90, 0.90}, {"B", 0.88, 0.88}, {"C", 0.86, 0.86}},
		},
		{
			name: "cosine worked example top-3", cands: cosineMemories, cfg: def, k: 3,
			want: []mmrWant{{"A", 0.90, 0.63}, {"D", 0.60, 0.42}, {"B", 0.88, 0.328}},
		},
		{
			name: "k larger than candidates", cands: cosineMemories, cfg: def, k: 10,
			want: []mmrWant{{"A", 0.90, 0.63}, {"D", 0.60, 0.42}, {"B", 0.88, 0.328}, {"C", 0.86, 0.314}},
		},
		{
			name: "jaccard worked example", cands: textMemories, cfg: def, k: 4,
			want: []mmrWant{{"A", 0.90, 0.63}, {"D", 0.60, 0.42}, {"B", 0.85, 0.395}, {"C", 0.80, 0.26}},
		},
		{
			// Window 2 keeps only A and B (top-2 by relevance): D is never
			// seen, k = 3 returns two. B = 0.616 - 0.3*0.96 = 0.328.
			name: "window 2", cands: cosineMemories, cfg: MMRConfig{Lambda: 0.7, Window: 2}, k: 3,
			want: []mmrWant{{"A", 0.90, 0.63}, {"B", 0.88, 0.328}},
		},
		{
			// Window 3 drops D: B 0.328 beats C 0.314, then C
			// 0.602 - 0.3*max(0.96, 0.9216) = 0.314.
			name: "window 3 excludes the distinct one", cands: cosineMemories,
			cfg: MMRConfig{Lambda: 0.7, Window: 3}, k: 3,
			want: []mmrWant{{"A", 0.90, 0.63}, {"B", 0.88, 0.328}, {"C", 0.86, 0.314}},
		},
		{
			// cos(P, N) = -1: the opposite memory gains,
			// 0.7*0.5 - 0.3*(-1) = 0.65. First pick ties at 0.35 → ID "N".
			name: "negative similarity", cfg: def, k: 2,
			cands: []Candidate{
				{ID: "P", Score: 0.5, Vector: []float32{1, 0}},
				{ID: "N", Score: 0.5, Vector: []float32{-1, 0}},
			},
			want: []mmrWant{{"N", 0.5, 0.35}, {"P", 0.5, 0.65}},
		},
		{
			// NaN relevance counts as 0; invalid config (lambda 2,
			// window 0) uses the defaults. x: 0.7*0.4 = 0.28, y: 0.
			name: "NaN score, invalid config", cfg: MMRConfig{Lambda: 2}, k: 2,
			cands: []Candidate{{ID: "y", Score: math.NaN()}, {ID: "x", Score: 0.4}},
			want:  []mmrWant{{"x", 0.4, 0.28}, {"y", 0, 0}},
		},
		{name: "empty input", cfg: def, k: 3, want: []mmrWant{}},
		{name: "k 0", cands: cosineMemories, cfg: def, k: 0, want: []mmrWant{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := ids(tc.cands)
			got := MMR(tc.cands, tc.cfg, tc.k)
			checkWellFormed(t, got, false)
			if got == nil {
				t.Fatal("MMR returned nil, want an empty slice")
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %d candidates", ids(got), len(tc.want))
			}
			for i, w := range tc.want {
				c := got[i]
				if c.ID != w.id || !near(c.Score, w.rel, 1e-12) || !near(c.Scores[ScoreMMR], w.obj, 1e-6) {
					t.Errorf("position %d: got %q rel %.6f mmr %.6f, want %q rel %.6f mmr %.6f",
						i, c.ID, c.Score, c.Scores[ScoreMMR], w.id, w.rel, w.obj)
				}
			}
			if fmt.Sprint(ids(tc.cands)) != fmt.Sprint(before) {
				t.Errorf("input reordered: %v", ids(tc.cands))
			}
			for _, c := range tc.cands {
				if _, ok := c.Scores[ScoreMMR]; ok {
					t.Errorf("input %q Scores written", c.ID)
				}
			}
		})
	}
}

func TestMMRConfigValidate(t *testing.T) {
	if err := DefaultMMRConfig().Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
	err := MMRConfig{Lambda: -0.1, Window: 0}.Validate()
	if err == nil || !strings.Contains(err.Error(), "lambda") || !strings.Contains(err.Error(), "window") {
		t.Errorf("want both fields reported, got %v", err)
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, WORLD! hello", []string{"hello", "world"}},
		{"Ünïcode ÉTÉ x2 3.14", []string{"ünïcode", "été", "x2", "3", "14"}},
		{"我喜欢茶", []string{"我", "喜", "欢", "茶"}},
		{"東京でカタカナ", []string{"東", "京", "で", "カ", "タ", "ナ"}},
		{"I love 北京 a lot", []string{"i", "love", "北", "京", "a", "lot"}},
		{"한국어 단어", []string{"한국어", "단어"}},      // Hangul is spaced: whole words
		{"cafe\u0301", []string{"cafe\u0301"}}, // combining mark stays in the word
		{"  ... ", nil},
	}
	for _, tc := range tests {
		got := Tokens(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("Tokens(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for _, w := range tc.want {
			if _, ok := got[w]; !ok {
				t.Errorf("Tokens(%q) = %v, missing %q", tc.in, got, w)
			}
		}
	}
}

func TestSimilarity(t *testing.T) {
	tests := []struct {
		name string
		a, b Candidate
		want float64
	}{
		{"cosine", Candidate{Vector: []float32{1, 0}}, Candidate{Vector: []float32{0.6, 0.8}}, 0.6},
		// Not normalised: (3,4)·(4,3) = 24, norms 5*5 → 0.96.
		{"cosine unnormalised", Candidate{Vector: []float32{3, 4}}, Candidate{Vector: []float32{4, 3}}, 0.96},
		{"zero vector", Candidate{Vector: []float32{0, 0}}, Candidate{Vector: []float32{1, 0}}, 0},
		// One side lacks a vector → Jaccard {a b} vs {b c}: 1/3.
		{"missing vector falls back", Candidate{Text: "a b", Vector: []float32{1}}, Candidate{Text: "B c"}, 1.0 / 3},
		// Dimension mismatch → Jaccard {x} vs {x}: 1.
		{"dimension mismatch falls back", Candidate{Text: "x", Vector: []float32{1}}, Candidate{Text: "X", Vector: []float32{1, 0}}, 1},
		// Jaccard {tea} vs {我 茶}: 0; CJK {我 喜 欢 茶} vs {我 茶}: 2/4.
		{"jaccard disjoint", Candidate{Text: "tea"}, Candidate{Text: "我茶"}, 0},
		{"jaccard cjk", Candidate{Text: "我喜欢茶"}, Candidate{Text: "我茶"}, 0.5},
		{"both texts empty", Candidate{}, Candidate{Text: "!!"}, 0},
		{"non-finite vector", Candidate{Vector: []float32{float32(math.Inf(1))}}, Candidate{Vector: []float32{1}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Similarity(tc.a, tc.b); !near(got, tc.want, 1e-6) {
				t.Errorf("Similarity = %v, want %v", got, tc.want)
			}
		})
	}
}

func benchCandidates(n, dim int, vectors bool) []Candidate {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("alice bob tea coffee paris berlin moved likes green dark roast may june meeting project deadline")
	out := make([]Candidate, n)
	for i := range out {
		c := Candidate{ID: fmt.Sprintf("m%04d", i), Score: r.Float64()}
		var sb strings.Builder
		for range 12 {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteByte(' ')
		}
		c.Text = sb.String()
		if vectors {
			v := make([]float32, dim)
			var norm float64
			for j := range v {
				v[j] = float32(r.NormFloat64())
				norm += float64(v[j]) * float64(v[j])
			}
			for j := range v {
				v[j] /= float32(math.Sqrt(norm))
			}
			c.Vector = v
		}
		out[i] = c
	}
	return out
}

// BenchmarkMMR_Window20 selects 10 of 100 candidates with the default
// window of 20: cosine over 384-dimensional vectors, and Jaccard over text.
func BenchmarkMMR_Window20(b *testing.B) {
	for _, vectors := range []bool{true, false} {
		name := "jaccard"
		if vectors {
			name = "cosine384"
		}
		cands := benchCandidates(100, 384, vectors)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MMR(cands, DefaultMMRConfig(), 10)
			}
		})
	}
}
