package scheduler

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the instrumentation scope of the scheduler's spans.
const tracerName = "github.com/rerankd/rerankd/scheduler"

// batchTrace is the tracing of one engine call. A batch serves several
// requests, so it cannot be a child of one: it is a root span of its own,
// linked to every traced request it served, and each of those requests
// gets an "inference" child span over the same interval linked back to it.
// A request also gets a "queue" span from Submit to its first engine call.
type batchTrace struct {
	span  trace.Span
	reqs  []*request // traced requests in the batch, each once
	pairs []int      // pairs of reqs[i] in the batch
	first []bool     // the batch is reqs[i]'s first engine call
}

// startBatchTrace returns nil, at the cost of a context lookup per pair,
// when no request in batch is traced. first[i] reports that batch[i]'s
// request reaches the engine for the first time in this call.
func startBatchTrace(batch []pair, first []bool, id uint64, start time.Time, real, padded int) *batchTrace {
	var bt *batchTrace
	for i, p := range batch {
		if !trace.SpanFromContext(p.req.ctx).IsRecording() {
			continue
		}
		if bt == nil {
			bt = &batchTrace{}
		}
		j := 0
		for j < len(bt.reqs) && bt.reqs[j] != p.req {
			j++
		}
		if j == len(bt.reqs) {
			bt.reqs, bt.pairs, bt.first = append(bt.reqs, p.req), append(bt.pairs, 0), append(bt.first, false)
		}
		bt.pairs[j]++
		bt.first[j] = bt.first[j] || first[i]
	}
	if bt == nil {
		return nil
	}
	links := make([]trace.Link, len(bt.reqs))
	for i, r := range bt.reqs {
		links[i] = trace.Link{SpanContext: trace.SpanContextFromContext(r.ctx)}
	}
	tracer := trace.SpanFromContext(bt.reqs[0].ctx).TracerProvider().Tracer(tracerName)
	_, bt.span = tracer.Start(context.Background(), "rerankd.batch",
		trace.WithNewRoot(), trace.WithTimestamp(start), trace.WithLinks(links...),
		trace.WithAttributes(attribute.Int64("rerankd.batch.id", int64(id)), attribute.Int("rerankd.batch.rows", len(batch)),
			attribute.Int("rerankd.batch.tokens", real), attribute.Int("rerankd.batch.padded_tokens", padded),
			attribute.Int("rerankd.batch.requests", len(bt.reqs))))
	return bt
}

// end closes the batch span and writes each request's queue and inference
// spans, now that the call's interval is known.
func (bt *batchTrace) end(id uint64, start, end time.Time, err error) {
	if bt == nil {
		return
	}
	if err != nil {
		bt.span.SetStatus(codes.Error, "engine call failed")
	}
	bt.span.End(trace.WithTimestamp(end))
	batchLink := trace.Link{SpanContext: bt.span.SpanContext()}
	for i, r := range bt.reqs {
		tracer := trace.SpanFromContext(r.ctx).TracerProvider().Tracer(tracerName)
		if bt.first[i] {
			_, q := tracer.Start(r.ctx, "rerankd.queue", trace.WithTimestamp(r.enq))
			q.End(trace.WithTimestamp(start))
		}
		_, s := tracer.Start(r.ctx, "rerankd.inference", trace.WithTimestamp(start), trace.WithLinks(batchLink),
			trace.WithAttributes(attribute.Int64("rerankd.batch.id", int64(id)), attribute.Int("rerankd.pairs", bt.pairs[i]),
				attribute.Int("rerankd.batch.rows", len(bt.reqs))))
		if err != nil {
			s.SetStatus(codes.Error, "engine call failed")
		}
		s.End(trace.WithTimestamp(end))
	}
}
