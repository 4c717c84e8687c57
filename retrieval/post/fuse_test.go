package post

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"
)

// The 3+3 example with overlap used by several tests.
//
//	bm25:   a 12, b 8, c 4     min 4, max 12  → a 1, b 0.5, c 0
//	vector: b 0.9, d 0.7, a 0.5 min 0.5, max 0.9 → b 1, d 0.5, a 0
var (
	exBM25   = []Hit{{"a", 12}, {"b", 8}, {"c", 4}}
	exVector = []Hit{{"b", 0.9}, {"d", 0.7}, {"a", 0.5}}
)

func TestFuse(t *testing.T) {
	rrf := DefaultFusionConfig()
	rrf.Method = RRF
	tests := []struct {
		name         string
		bm25, vector []Hit
		cfg          FusionConfig
		want         []want
	}{
		{
			// fused = 0.7*n_vector + 0.3*n_bm25
			//   b = 0.7*1   + 0.3*0.5 = 0.85
			//   d = 0.7*0.5 + 0.3*0   = 0.35 (missing from bm25 → 0)
			//   a = 0.7*0   + 0.3*1   = 0.30
			//   c = 0.7*0   + 0.3*0   = 0    (missing from vector → 0)
			name: "weighted sum 3+3 overlap", bm25: exBM25, vector: exVector,
			cfg:  DefaultFusionConfig(),
			want: []want{{"b", 0.85}, {"d", 0.35}, {"a", 0.3}, {"c", 0}},
		},
		{
			// Weights 7 and 3 are divided by their sum: same as 0.7/0.3.
			name: "weights are relative", bm25: exBM25, vector: exVector,
			cfg:  FusionConfig{VectorWeight: 7, BM25Weight: 3, RRFK: 60},
			want: []want{{"b", 0.85}, {"d", 0.35}, {"a", 0.3}, {"c", 0}},
		},
		{
			// BM25 only: b 0.5, a 1, c 0; vector-only d gets 0.
			name: "bm25 weight only", bm25: exBM25, vector: exVector,
			cfg:  FusionConfig{VectorWeight: 0, BM25Weight: 1, RRFK: 60},
			want: []want{{"a", 1}, {"b", 0.5}, {"c", 0}, {"d", 0}},
		},
		{
			// bm25 max == min → both 1 → 0.3*1 = 0.3; vector list
			// normalised as usual: y 1 → 0.7 (+0.3) = 1.0, z 0 → 0.
			name: "degenerate max==min list",
			bm25: []Hit{{"x", 5}, {"y", 5}}, vector: []Hit{{"y", 0.8}, {"z", 0.2}},
			cfg:  DefaultFusionConfig(),
			want: []want{{"y", 1}, {"x", 0.3}, {"z", 0}},
		},
		{
			// A single-element list is degenerate too: v → 0.7*1.
			name: "single hit", vector: []Hit{{"v", -0.2}},
			cfg:  DefaultFusionConfig(),
			want: []want{{"v", 0.7}},
		},
		{
			// Equal fused scores are ordered by ID.
			name: "ties by id", bm25: []Hit{{"q", 1}, {"p", 1}},
			cfg:  DefaultFusionConfig(),
			want: []want{{"p", 0.3}, {"q", 0.3}},
		},
		{
			// k = 60; ranks bm25 a1 b2 c3, vector b1 d2 a3.
			//   b = 1/62 + 1/61 = 0.016129032 + 0.016393443 = 0.032522475
			//   a = 1/61 + 1/63 = 0.016393443 + 0.015873016 = 0.032266459
			//   d = 1/62        = 0.016129032
			//   c = 1/63        = 0.015873016
			name: "rrf", bm25: exBM25, vector: exVector, cfg: rrf,
			want: []want{
				{"b", 1.0/62 + 1.0/61}, {"a", 1.0/61 + 1.0/63},
				{"d", 1.0 / 62}, {"c", 1.0 / 63},
			},
		},
		{
			// RRF ranks by score, not input order; k = 1:
			// m rank 1 → 1/2, n rank 2 → 1/3.
			name: "rrf ranks by score", bm25: []Hit{{"n", 1}, {"m", 3}},
			cfg:  FusionConfig{Method: RRF, VectorWeight: 1, RRFK: 1},
			want: []want{{"m", 0.5}, {"n", 1.0 / 3}},
		},
		{
			// NaN and ±Inf count as 0: bm25 {a 0, b 2, c 0, d 0} → b 1,
			// others 0 → b 0.3, rest 0 (ties by ID).
			name: "non-finite scores are 0",
			bm25: []Hit{{"a", math.NaN()}, {"b", 2}, {"c", math.Inf(1)}, {"d", math.Inf(-1)}},
			cfg:  DefaultFusionConfig(),
			want: []want{{"b", 0.3}, {"a", 0}, {"c", 0}, {"d", 0}},
		},
		{
			// A repeated ID keeps its best score: a 4 (not 1), b 2 →
			// a 1, b 0 → a 0.3, b 0.
			name: "duplicate ids keep the max",
			bm25: []Hit{{"a", 1}, {"b", 2}, {"a", 4}},
			cfg:  DefaultFusionConfig(),
			want: []want{{"a", 0.3}, {"b", 0}},
		},
		{
			// max - min overflows float64; the halved span still gives
			// hi 1, mid 0.5, lo 0.
			name: "huge span",
			bm25: []Hit{{"hi", math.MaxFloat64}, {"mid", 0}, {"lo", -math.MaxFloat64}},
			cfg:  FusionConfig{BM25Weight: 1},
			want: []want{{"hi", 1}, {"mid", 0.5}, {"lo", 0}},
		},
		{
			// Invalid config (both weights 0, k 0) falls back to defaults.
			name: "invalid config uses defaults", bm25: exBM25, vector: exVector,
			cfg:  FusionConfig{Method: "bogus"},
			want: []want{{"b", 0.85}, {"d", 0.35}, {"a", 0.3}, {"c", 0}},
		},
		{name: "empty", cfg: DefaultFusionConfig(), want: []want{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bm25 := append([]Hit(nil), tc.bm25...)
			vector := append([]Hit(nil), tc.vector...)
			got := Fuse(tc.bm25, tc.vector, tc.cfg)
			checkWellFormed(t, got, true)
			checkOrder(t, got, tc.want, eps)
			for _, c := range got {
				if c.Scores[ScoreFused] != c.Score {
					t.Errorf("%q: Scores[fused] %v != Score %v", c.ID, c.Scores[ScoreFused], c.Score)
				}
			}
			for i := range bm25 {
				if tc.bm25[i] != bm25[i] && !math.IsNaN(bm25[i].Score) {
					t.Errorf("bm25 input mutated at %d", i)
				}
			}
			for i := range vector {
				if tc.vector[i] != vector[i] {
					t.Errorf("vector input mutated at %d", i)
				}
			}
		})
	}
}

func TestFuseRecordsRawScores(t *testing.T) {
	got := Fuse(exBM25, exVector, DefaultFusionConfig())
	byID := map[string]Candidate{}
	for _, c := range got {
		byID[c.ID] = c
	}
	if s := byID["a"].Scores; s[ScoreBM25] != 12 || s[ScoreVector] != 0.5 {
		t.Errorf("a: Scores %v, want bm25 12, vector 0.5", s)
	}
	if _, ok := byID["c"].Scores[ScoreVector]; ok {
		t.Errorf("c is not a vector hit but has Scores[vector]")
	}
	if _, ok := byID["d"].Scores[ScoreBM25]; ok {
		t.Errorf("d is not a bm25 hit but has Scores[bm25]")
	}
}

func TestFusionConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  FusionConfig
		errs []string // substrings that must all appear
	}{
		{"default", DefaultFusionConfig(), nil},
		{"empty method is weighted sum", FusionConfig{VectorWeight: 1, RRFK: 1}, nil},
		{"zero value", FusionConfig{}, []string{"not both be 0", "rrf_k"}},
		{"everything wrong", FusionConfig{Method: "x", VectorWeight: -1, BM25Weight: math.NaN(), RRFK: math.Inf(1)},
			[]string{"method", "vector_weight", "bm25_weight", "rrf_k"}},
		{"negative k", FusionConfig{VectorWeight: 1, RRFK: -5}, []string{"rrf_k"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err != nil) != (len(tc.errs) > 0) {
				t.Fatalf("Validate() = %v, want errors %v", err, tc.errs)
			}
			for _, s := range tc.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// encodeHits packs hits as the fuzzer's byte format: per hit, one ID byte
// and 8 bytes of float64 bits.
func encodeHits(hits []Hit) []byte {
	var b []byte
	for _, h := range hits {
		b = append(b, h.ID[0])
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(h.Score))
	}
	return b
}

func decodeHits(b []byte) []Hit {
	var hits []Hit
	for len(b) >= 9 {
		// IDs from a small alphabet so lists overlap and repeat.
		id := string(rune('a' + b[0]%8))
		hits = append(hits, Hit{id, math.Float64frombits(binary.LittleEndian.Uint64(b[1:9]))})
		b = b[9:]
	}
	return hits
}

// FuzzFuse checks that any scores — equal, huge, NaN, ±Inf — give finite,
// sorted output over the union of IDs, in [0, 1] for WeightedSum. NaN and
// ±Inf are treated as 0 (documented on Hit.Score).
func FuzzFuse(f *testing.F) {
	seeds := [][2][]Hit{
		{exBM25, exVector},
		{{{"x", 5}, {"y", 5}}, {{"y", 0.8}, {"z", 0.2}}},
		{{{"a", math.NaN()}, {"b", math.Inf(1)}}, {{"a", math.Inf(-1)}}},
		{{{"a", math.MaxFloat64}, {"b", -math.MaxFloat64}}, nil},
		{nil, nil},
	}
	for _, s := range seeds {
		for _, rrf := range []bool{false, true} {
			f.Add(encodeHits(s[0]), encodeHits(s[1]), rrf, 0.7, 0.3)
		}
	}
	f.Fuzz(func(t *testing.T, bb, vb []byte, rrf bool, wv, wb float64) {
		bm25, vector := decodeHits(bb), decodeHits(vb)
		cfg := FusionConfig{Method: WeightedSum, VectorWeight: wv, BM25Weight: wb, RRFK: 60}
		if rrf {
			cfg.Method = RRF
		}
		got := Fuse(bm25, vector, cfg)
		checkWellFormed(t, got, true)
		union := map[string]bool{}
		for _, h := range append(bm25, vector...) {
			union[h.ID] = true
		}
		if len(got) != len(union) {
			t.Fatalf("got %d candidates, union has %d", len(got), len(union))
		}
		for _, c := range got {
			if !union[c.ID] {
				t.Fatalf("unknown candidate %q", c.ID)
			}
			if !rrf && (c.Score < 0 || c.Score > 1+1e-12) {
				t.Fatalf("weighted score %v outside [0, 1]", c.Score)
			}
		}
	})
}

func BenchmarkFuse_1000(b *testing.B) {
	bm25 := make([]Hit, 1000)
	vector := make([]Hit, 1000)
	for i := range 1000 {
		// Half of each list overlaps the other.
		bm25[i] = Hit{ID: "m" + strconv.Itoa(i), Score: float64(1000-i) / 10}
		vector[i] = Hit{ID: "m" + strconv.Itoa(i+500), Score: 1 - float64(i)/1000}
	}
	for _, m := range []FusionMethod{WeightedSum, RRF} {
		cfg := DefaultFusionConfig()
		cfg.Method = m
		b.Run(string(m), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Fuse(bm25, vector, cfg)
			}
		})
	}
}
