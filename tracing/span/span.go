// Package span starts child spans for rerankd's stages. It uses only the
// OpenTelemetry API: the provider is the one of the span already in the
// context (the request's server span), so a stage needs no tracing
// configuration, and with tracing off every call is a no-op costing one
// context lookup. Attributes must never hold request text.
package span

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Start starts a child of the span in ctx, in the instrumentation scope
// named scope (the calling package's import path).
func Start(ctx context.Context, scope, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer(scope).Start(ctx, name, trace.WithAttributes(attrs...))
}

// End marks s failed when err is not nil, then ends it. The error's text
// is not recorded: it may quote a request.
func End(s trace.Span, err error) {
	if err != nil {
		s.SetStatus(codes.Error, "failed")
	}
	s.End()
}
