package model

import (
	"testing"
	"time"

	"github.com/rerankd/rerankd/model/onnx"
)

func TestPeakGFLOPs(t *testing.T) {
	for _, q := range []onnx.Quant{onnx.QuantNone, onnx.QuantInt8} {
		t.Run(q.String(), func(t *testing.T) {
			g, err := PeakGFLOPs(DefaultSessionConfig(), q, 2, 64, 16, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if !(g > 0) {
				t.Errorf("PeakGFLOPs = %v, want > 0", g)
			}
		})
	}
}
