package tracing

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Provider is the tracer provider handed to the server, with the exporter
// behind it.
type Provider struct {
	trace.TracerProvider
	sdk *sdktrace.TracerProvider // nil when tracing is off
}

// Start builds the provider cfg describes. Off, it returns a no-op
// provider. log receives export failures (a collector that is down costs
// dropped spans and a warning, never a failed request).
func Start(ctx context.Context, cfg Config, log *slog.Logger) (*Provider, error) {
	if !cfg.Enabled {
		return &Provider{TracerProvider: noop.NewTracerProvider()}, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	// Later options win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override our name, so an operator's naming is kept.
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(cfg.ServiceVersion)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	exp, err := newExporter(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	if log != nil {
		// The SDK reports export failures through one process-wide handler.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("trace export failed", "err", err) }))
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Provider{TracerProvider: sdk, sdk: sdk}, nil
}

func newExporter(ctx context.Context, cfg Config) (*otlptrace.Exporter, error) {
	if cfg.Protocol == ProtocolGRPC {
		var opts []otlptracegrpc.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	if cfg.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(cfg.Endpoint))
	}
	return otlptracehttp.New(ctx, opts...)
}

// Enabled reports whether spans are exported.
func (p *Provider) Enabled() bool { return p.sdk != nil }

// ForceFlush exports the spans buffered so far.
func (p *Provider) ForceFlush(ctx context.Context) error {
	if p.sdk == nil {
		return nil
	}
	return p.sdk.ForceFlush(ctx)
}

// Shutdown exports the spans still buffered and stops the exporter.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p.sdk == nil {
		return nil
	}
	if err := p.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}
