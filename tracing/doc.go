// Package tracing sets up OpenTelemetry trace export for rerankd: an SDK
// tracer provider with an OTLP exporter (HTTP/protobuf or gRPC), configured
// by the standard OpenTelemetry environment variables.
//
// Contract:
//   - Tracing is off unless configured: Enabled is true only when an OTLP
//     endpoint variable is set or OTEL_TRACES_EXPORTER=otlp, and never when
//     OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. Off, no SDK is
//     built and instrumented code sees the API's no-op provider, so spans
//     cost one context lookup.
//   - Config is read from a lookup function (cmd/rerankd passes
//     os.LookupEnv); this package never reads the environment itself. The
//     OTLP exporters do read the transport variables (endpoint, headers,
//     timeout, compression, certificates), as their packages document, and
//     the SDK reads OTEL_TRACES_SAMPLER(_ARG), OTEL_SERVICE_NAME and
//     OTEL_RESOURCE_ATTRIBUTES. That is the standard contract operators
//     expect, so it is kept rather than re-implemented.
//   - Spans carry no request text (queries, documents, memory text): only
//     counts, sizes, routes, status codes and error kinds. Instrumented
//     packages use only the OpenTelemetry API (go.opentelemetry.io/otel/trace)
//     and find the provider through the span in their context, so they need
//     no tracing configuration and do not link the SDK.
//   - Shutdown flushes spans still buffered; call it after the server has
//     drained its requests.
package tracing
