package tracing

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/rerankd/rerankd/internal/otlptest"
)

// TestExportReachesCollector: spans started through the provider arrive at
// a real OTLP receiver over both protocols, with the service's resource,
// and Shutdown flushes them.
func TestExportReachesCollector(t *testing.T) {
	rcv := otlptest.Start(t)
	for _, tc := range []struct{ protocol, endpoint string }{
		{ProtocolHTTP, rcv.HTTPURL},
		{ProtocolGRPC, rcv.GRPCURL},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Enabled, cfg.Protocol, cfg.Endpoint, cfg.ServiceVersion = true, tc.protocol, tc.endpoint, "1.2.3"
			p, err := Start(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Enabled() {
				t.Fatal("provider reports tracing off")
			}
			name := "probe-" + tc.protocol
			_, sp := p.Tracer("test").Start(context.Background(), name)
			sp.SetAttributes(attribute.Int("n", 7))
			sp.End()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			got := otlptest.Named(rcv.Spans(), name)
			if len(got) != 1 {
				t.Fatalf("%d spans named %s arrived, want 1", len(got), name)
			}
			s := got[0]
			if s.Resource["service.name"] != "rerankd" || s.Resource["service.version"] != "1.2.3" || s.Attrs["n"] != "7" {
				t.Errorf("resource %v attrs %v", s.Resource, s.Attrs)
			}
		})
	}
}

// TestServiceNameFromEnv: OTEL_SERVICE_NAME wins over the built-in name.
func TestServiceNameFromEnv(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "memory-rerank-eu")
	rcv := otlptest.Start(t)
	cfg := DefaultConfig()
	cfg.Enabled, cfg.Endpoint = true, rcv.HTTPURL
	p, err := Start(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, sp := p.Tracer("test").Start(context.Background(), "x")
	sp.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rcv.Spans()
	if len(got) != 1 || got[0].Resource["service.name"] != "memory-rerank-eu" {
		t.Fatalf("spans %+v", got)
	}
}

// TestOffExportsNothing: with tracing off the provider is a no-op.
func TestOffExportsNothing(t *testing.T) {
	p, err := Start(context.Background(), DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, sp := p.Tracer("test").Start(context.Background(), "x")
	if p.Enabled() || sp.IsRecording() || sp.SpanContext().IsValid() {
		t.Error("tracing off still records spans")
	}
	sp.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
