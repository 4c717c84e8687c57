package scheduler

import (
	"context"
	"errors"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestBatchSpans: a request split over several engine calls gets one queue
// span and one inference span per call, each linked to that call's batch
// span, which is a root linked back to the request; an untraced request in
// the same scheduler adds no span; a failed call marks its spans failed.
func TestBatchSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	eng := &fakeEngine{fail: func(seqs [][]int) error {
		if seqs[0][0] == 666 {
			return errors.New("boom")
		}
		return nil
	}}
	cfg := DefaultConfig()
	cfg.MaxBatch = 1 // every pair its own call
	s := mustNew(t, eng, cfg)

	ctx, req := tp.Tracer("test").Start(context.Background(), "request")
	if _, err := s.Submit(ctx, [][]int{{1, 2}, {3, 4, 5}, {6}}, nil); err != nil {
		t.Fatal(err)
	}
	req.End()
	if _, err := s.Submit(context.Background(), [][]int{{7}}, nil); err != nil {
		t.Fatal(err)
	}
	fctx, failing := tp.Tracer("test").Start(context.Background(), "failing")
	if _, err := s.Submit(fctx, [][]int{{666}}, nil); !errors.Is(err, ErrEngine) {
		t.Fatalf("err = %v, want ErrEngine", err)
	}
	failing.End()

	spans := rec.Ended()
	count := map[string]int{}
	batches := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, sp := range spans {
		count[sp.Name()]++
		if sp.Name() == "rerankd.batch" {
			batches[sp.SpanContext().SpanID()] = sp
		}
	}
	// 3 + 1 traced calls; the untraced request's call has no batch span.
	if count["rerankd.batch"] != 4 || count["rerankd.inference"] != 4 || count["rerankd.queue"] != 2 {
		t.Fatalf("span counts %v", count)
	}
	for _, sp := range spans {
		switch sp.Name() {
		case "rerankd.inference", "rerankd.queue":
			owner := req.SpanContext()
			if sp.Parent().TraceID() != owner.TraceID() && sp.Parent().TraceID() != failing.SpanContext().TraceID() {
				t.Errorf("%s is not a child of a traced request", sp.Name())
			}
			if sp.Name() == "rerankd.queue" {
				continue
			}
			if len(sp.Links()) != 1 {
				t.Fatalf("inference span links %v", sp.Links())
			}
			b, ok := batches[sp.Links()[0].SpanContext.SpanID()]
			if !ok || b.StartTime() != sp.StartTime() || b.EndTime() != sp.EndTime() {
				t.Errorf("inference span not linked to a batch of the same interval")
			}
		case "rerankd.batch":
			if sp.Parent().IsValid() || len(sp.Links()) != 1 {
				t.Errorf("batch span parent %v links %v", sp.Parent(), sp.Links())
			}
			failed := sp.Status().Code.String() == "Error"
			if fromFailing := sp.Links()[0].SpanContext.TraceID() == failing.SpanContext().TraceID(); failed != fromFailing {
				t.Errorf("batch failed=%v, but it served the failing request=%v", failed, fromFailing)
			}
		}
	}
}
