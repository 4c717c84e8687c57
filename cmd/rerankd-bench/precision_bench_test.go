package main

import (
	"strings"
	"testing"
	"time"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// BenchmarkMatMulChain_Precision measures which half-precision MatMul
// kernels ONNX Runtime has for this CPU and how fast they run, against
// float32 in the same run: a chain of 0.6B-model-wide [1024, 1024]
// products over 256 rows, the float32 chain timed before and after each
// half-precision one (the ratio uses their mean, so drift hits both). A
// type without a kernel is reported and skipped.
//
//	go test -run - -bench MatMulChain_Precision -benchtime 1x ./cmd/rerankd-bench
func BenchmarkMatMulChain_Precision(b *testing.B) {
	if err := model.InitRuntime(testenv.ORTLib()); err != nil {
		b.Fatal(err)
	}
	const layers, dim, rows = 8, 1024, 256
	cfg := model.DefaultSessionConfig()
	f32, err := newPeakMeter(cfg, onnx.QuantNone, layers, dim, rows)
	if err != nil {
		b.Fatal(err)
	}
	defer f32.Close() //nolint:errcheck // a benchmark
	for _, e := range []onnxpb.TensorProto_DataType{onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16} {
		b.Run(strings.ToLower(e.String()), func(b *testing.B) {
			m, err := newHalfPeakMeter(cfg, e, layers, dim, rows)
			if err != nil {
				b.Skipf("no %v MatMul on this CPU: %v", e, err)
			}
			defer m.Close() //nolint:errcheck // a benchmark
			b.ReportAllocs()
			var half, before, after float64
			for b.Loop() {
				if before, err = f32.Measure(time.Second); err == nil {
					if half, err = m.Measure(time.Second); err == nil {
						after, err = f32.Measure(time.Second)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(half, "GFLOP/s")
			b.ReportMetric((before+after)/2, "fp32-GFLOP/s")
			b.ReportMetric(half/((before+after)/2), "x_fp32")
		})
	}
}
