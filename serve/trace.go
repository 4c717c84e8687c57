package serve

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/rerankd/rerankd/tracing/span"
)

// tracerName names the instrumentation scope of every span this package
// starts.
const tracerName = "github.com/rerankd/rerankd/serve"

// errorKindKey holds the error kind errorHandler answered with, for the
// request's span.
const errorKindKey = "rerankd.error_kind"

// untraced are probes and static pages: a span each would bury the API's
// traces under load-balancer health checks.
func untraced(path string) bool {
	switch path {
	case "/health", "/ready", "/metrics", "/openapi.json":
		return true
	}
	return strings.HasPrefix(path, "/docs") || strings.HasPrefix(path, "/ui")
}

// headerCarrier lets the W3C propagator read and write fasthttp headers.
type headerCarrier struct{ h *fasthttp.RequestHeader }

func (c headerCarrier) Get(key string) string { return string(c.h.Peek(key)) }
func (c headerCarrier) Set(key, value string) { c.h.Set(key, value) }
func (c headerCarrier) Keys() []string {
	var keys []string
	c.h.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}

// propagator honours an incoming traceparent/tracestate (and baggage).
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// traced starts the request's server span, a child of the caller's
// traceparent when there is one, and puts it in the user context every
// handler passes down. Attributes are the method, route, status and error
// kind: never a path with memory ids, a header value or the body.
func (s *Server) traced(c *fiber.Ctx) error {
	if untraced(c.Path()) {
		return c.Next()
	}
	ctx := propagator.Extract(c.UserContext(), headerCarrier{&c.Request().Header})
	ctx, sp := s.tracer.Start(ctx, c.Method(), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(semconv.HTTPRequestMethodKey.String(c.Method())))
	defer sp.End()
	c.SetUserContext(ctx)
	err := c.Next() // observe answers errors itself: err is only its own failure
	code := c.Response().StatusCode()
	route := c.Route().Path
	if code == fiber.StatusNotFound {
		route = "unmatched"
	}
	sp.SetName(c.Method() + " " + route)
	sp.SetAttributes(semconv.HTTPRoute(route), semconv.HTTPResponseStatusCode(code))
	kind, _ := c.Locals(errorKindKey).(Kind)
	if kind != "" {
		sp.SetAttributes(semconv.ErrorTypeKey.String(string(kind)))
	}
	// A failed model is the server's fault though it answers 424: the
	// same rule errorHandler logs by.
	if code >= 500 || kind == KindBackend {
		sp.SetStatus(codes.Error, fasthttp.StatusMessage(code))
	}
	return err
}

// startSpan starts a child of the span in ctx (see tracing/span).
func startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return span.Start(ctx, tracerName, name, attrs...)
}

// endSpan records err's kind (if any) on s and ends it.
func endSpan(s trace.Span, err error) {
	if err != nil {
		s.SetAttributes(semconv.ErrorTypeKey.String(string(classify(err).Kind)))
	}
	span.End(s, err)
}
