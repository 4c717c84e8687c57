package model

import (
	"context"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
)

// BenchmarkEncoder_MiniLM scores 20 pairs of 128 tokens per call on a
// MiniLM-L-6-sized cross-encoder (random weights), batched and one call
// per pair, reporting pairs/s: the batched path's gain over per-pair calls.
func BenchmarkEncoder_MiniLM(b *testing.B) {
	cfg := arch.MiniLML6()
	w, err := arch.RandomEncoder(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	m, err := onnx.BuildEncoder(w, onnx.NewEncoderOptions())
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := m.Save(dir); err != nil {
		b.Fatal(err)
	}
	s, err := OpenEncoderSession(dir+"/"+onnx.ModelFile, DefaultSessionConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close() //nolint:errcheck // benchmark teardown
	rows := encoderRows(cfg, 20, 1)
	for i := range rows {
		rows[i] = encoderRows(cfg, 2, uint64(i))[1] // the model's longest row
		rows[i].IDs, rows[i].TypeIDs = rows[i].IDs[:128], rows[i].TypeIDs[:128]
	}
	ctx := context.Background()
	for _, mode := range []string{"batched", "per_pair"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if mode == "batched" {
					if _, err := s.Logits(ctx, rows); err != nil {
						b.Fatal(err)
					}
					continue
				}
				for _, r := range rows {
					if _, err := s.Logits(ctx, []Encoded{r}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}
