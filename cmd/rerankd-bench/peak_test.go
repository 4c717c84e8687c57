package main

import (
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/onnx"
)

func TestPeakGFLOPs(t *testing.T) {
	if err := model.InitRuntime(testenv.ORTLib()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []onnx.Quant{onnx.QuantNone, onnx.QuantInt8} {
		t.Run(q.String(), func(t *testing.T) {
			g, err := peakGFLOPs(model.DefaultSessionConfig(), q, 2, 64, 16, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if !(g > 0) {
				t.Errorf("peakGFLOPs = %v, want > 0", g)
			}
		})
	}
}
