package model

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
)

// BenchmarkEncoderFusion compares encoder graph forms (onnx.EncoderFusion
// sets) in one run on a cross-encoder with random weights: MiniLM-L-6's
// shape, or with RERANKD_ENC_FUSION_ARCH=xlmr bge-reranker-v2-m3's width
// at RERANKD_ENC_FUSION_LAYERS layers (default 4: every layer costs the
// same, so the ratios are the full model's). Each round is one request of
// 20 pairs of 40-128 tokens, scored as one padded batch by every form in
// turn, the leading form rotating, so a shared machine's drift hits them
// alike. Per form it reports the median request time and CPU time (ONNX
// Runtime's idle threads block instead of spinning, so CPU time is the
// work done, which a loaded machine inflates less than wall time), their
// median ratios to the first form's (below 1: faster), and the largest
// logit difference from the first form.
//
//	RERANKD_ENC_FUSION=none,all go test -run - -bench EncoderFusion -benchtime 1x ./model
//
// RERANKD_ENC_FUSION lists the forms as onnx.ParseEncoderFusion names them
// (default "none,all"), RERANKD_ENC_FUSION_QUANT fp32 or int8,
// RERANKD_ENC_FUSION_REQUESTS the rounds (default 8).
func BenchmarkEncoderFusion(b *testing.B) {
	forms := []onnx.EncoderFusion{0, onnx.AllEncoderFusions}
	if s := os.Getenv("RERANKD_ENC_FUSION"); s != "" {
		forms = forms[:0]
		for _, name := range strings.Split(s, ",") {
			f, err := onnx.ParseEncoderFusion(name)
			if err != nil {
				b.Fatal(err)
			}
			forms = append(forms, f)
		}
	}
	q := onnx.QuantNone
	if s := os.Getenv("RERANKD_ENC_FUSION_QUANT"); s != "" {
		var err error
		if q, err = onnx.ParseQuant(s); err != nil {
			b.Fatal(err)
		}
	}
	cfg := arch.MiniLML6()
	if os.Getenv("RERANKD_ENC_FUSION_ARCH") == "xlmr" {
		cfg = arch.BGERerankerV2M3()
		cfg.NumHiddenLayers, cfg.VocabSize = envInt(b, "RERANKD_ENC_FUSION_LAYERS", 4), 4096
	}
	rounds := envInt(b, "RERANKD_ENC_FUSION_REQUESTS", 8)
	w, err := arch.RandomEncoder(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	sc := DefaultSessionConfig()
	sc.IntraOpThreads, sc.Spinning = 2, false
	sessions := make([]*EncoderSession, len(forms))
	for i, f := range forms {
		o := onnx.NewEncoderOptions()
		o.Fusion, o.Quant = f, q
		m, err := onnx.BuildEncoder(w, o)
		if err != nil {
			b.Fatal(err)
		}
		dir := b.TempDir()
		if err := m.Save(dir); err != nil {
			b.Fatal(err)
		}
		if sessions[i], err = OpenEncoderSession(filepath.Join(dir, onnx.ModelFile), sc); err != nil {
			b.Fatalf("%v: %v", f, err)
		}
		defer sessions[i].Close() //nolint:errcheck // a benchmark
	}
	rng := rand.New(rand.NewPCG(3, 4))
	request := func() []Encoded {
		rows := make([]Encoded, 20)
		for i := range rows {
			n := 40 + rng.IntN(89)
			r := Encoded{IDs: make([]int, n)}
			for j := range r.IDs {
				r.IDs[j] = 1 + rng.IntN(cfg.VocabSize-1)
			}
			if cfg.TypeVocabSize > 1 {
				r.TypeIDs = make([]int, n)
				for j := n / 3; j < n; j++ {
					r.TypeIDs[j] = 1
				}
			}
			rows[i] = r
		}
		return rows
	}
	ctx := context.Background()
	warm := request()
	for _, s := range sessions {
		if _, err := s.Logits(ctx, warm); err != nil {
			b.Fatal(err)
		}
	}
	times, cpus := make([][]float64, len(forms)), make([][]float64, len(forms))
	ratios, cpuRatios := make([][]float64, len(forms)), make([][]float64, len(forms))
	maxDiff := make([]float64, len(forms))
	for b.Loop() {
		for r := range rounds {
			rows := request()
			results := make([][]float32, len(forms))
			for k := range forms {
				i := (k + r) % len(forms)
				start, cpu0 := time.Now(), cpuSeconds(b)
				got, err := sessions[i].Logits(ctx, rows)
				if err != nil {
					b.Fatal(err)
				}
				times[i] = append(times[i], time.Since(start).Seconds())
				cpus[i] = append(cpus[i], cpuSeconds(b)-cpu0)
				results[i] = got
			}
			for i := range forms {
				ratios[i] = append(ratios[i], times[i][len(times[i])-1]/times[0][len(times[0])-1])
				cpuRatios[i] = append(cpuRatios[i], cpus[i][len(cpus[i])-1]/cpus[0][len(cpus[0])-1])
				for j := range results[i] {
					maxDiff[i] = math.Max(maxDiff[i], math.Abs(float64(results[i][j]-results[0][j])))
				}
			}
		}
	}
	for i, f := range forms {
		b.Logf("%s %d layers, hidden %d, %v, %-26v median %.3f s per request (x%.3f of %v: pairs/s x%.3f), CPU %.3f s (x%.3f), max |logit - %v| %.2g",
			cfg.Family(), cfg.NumHiddenLayers, cfg.HiddenSize, q, f, medianOf(times[i]), medianOf(ratios[i]), forms[0], 1/medianOf(ratios[i]),
			medianOf(cpus[i]), medianOf(cpuRatios[i]), forms[0], maxDiff[i])
		name := strings.ReplaceAll(f.String(), "+", "_")
		b.ReportMetric(1/medianOf(ratios[i]), "speed_vs_first_"+name)
		b.ReportMetric(1/medianOf(cpuRatios[i]), "cpu_speed_vs_first_"+name)
	}
}
