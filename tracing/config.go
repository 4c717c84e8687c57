package tracing

import (
	"errors"
	"fmt"
	"strings"
)

// Protocols the exporter speaks (OTEL_EXPORTER_OTLP_PROTOCOL values).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config selects whether and how spans are exported.
type Config struct {
	// Enabled turns export on; off, Start returns a no-op provider.
	Enabled bool
	// Protocol is ProtocolHTTP (the OpenTelemetry default) or ProtocolGRPC.
	Protocol string
	// Endpoint overrides the exporter's endpoint: a URL such as
	// "http://collector:4318" (HTTP) or "http://collector:4317" (gRPC);
	// an http:// scheme means no TLS. Empty: the exporter's own rule
	// (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, else localhost).
	Endpoint string
	// ServiceName is used when OTEL_SERVICE_NAME and the resource
	// attributes name none.
	ServiceName string
	// ServiceVersion is recorded as service.version.
	ServiceVersion string
}

// DefaultConfig returns tracing off, HTTP/protobuf when turned on.
func DefaultConfig() Config {
	return Config{Protocol: ProtocolHTTP, ServiceName: "rerankd", ServiceVersion: "dev"}
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	switch c.Protocol {
	case ProtocolHTTP, ProtocolGRPC:
	case "http/json":
		errs = append(errs, errors.New("OTLP protocol http/json: the Go exporter has no JSON encoding; use http/protobuf or grpc"))
	default:
		errs = append(errs, fmt.Errorf("OTLP protocol %q: want http/protobuf or grpc", c.Protocol))
	}
	if c.Endpoint != "" && !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
		errs = append(errs, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL", c.Endpoint))
	}
	if c.ServiceName == "" {
		errs = append(errs, errors.New("service name must not be empty"))
	}
	return errors.Join(errs...)
}

// FromEnv reads the OpenTelemetry variables that decide whether traces are
// exported and over which protocol, starting from base. lookup is
// os.LookupEnv or a test's map.
func FromEnv(base Config, lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	c := base
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		c.Enabled = false
		return c, nil
	}
	switch exp := strings.ToLower(get("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		c.Enabled = false
		return c, nil
	case "otlp":
		c.Enabled = true
	case "":
		c.Enabled = get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return c, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: rerankd exports traces over OTLP only (otlp or none)", exp)
	}
	if p := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); p != "" {
		c.Protocol = p
	} else if p := get("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" {
		c.Protocol = p
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}
