package tracing

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
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
	if err := checkEnv(get); err != nil {
		return c, err
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

// samplers are the OTEL_TRACES_SAMPLER values the SDK implements.
var samplers = map[string]bool{
	"always_on": true, "always_off": true, "traceidratio": true,
	"parentbased_always_on": true, "parentbased_always_off": true, "parentbased_traceidratio": true,
}

// checkEnv refuses the variables the SDK itself would read leniently: an
// unknown sampler is logged and replaced at the first span, a malformed
// endpoint silently becomes https://localhost:4318, and malformed
// resource attributes fail later than the flags. All three are the same
// kind of mistake, so all are refused here, naming the variable, before
// anything starts.
func checkEnv(get func(string) string) error {
	var errs []error
	if v := get("OTEL_TRACES_SAMPLER"); v != "" && !samplers[strings.ToLower(v)] {
		errs = append(errs, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: want always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio", v))
	}
	if v := get("OTEL_TRACES_SAMPLER_ARG"); v != "" && strings.HasSuffix(strings.ToLower(get("OTEL_TRACES_SAMPLER")), "traceidratio") {
		if r, err := strconv.ParseFloat(v, 64); err != nil || !(r >= 0 && r <= 1) {
			errs = append(errs, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio in [0, 1]", v))
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v := get(k); v != "" {
			if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, fmt.Errorf("%s=%q: want an http:// or https:// URL with a host, such as http://collector:4318", k, v))
			}
		}
	}
	if v := get("OTEL_RESOURCE_ATTRIBUTES"); v != "" {
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(kv, "=")
			_, kerr := url.PathUnescape(k)
			_, verr := url.PathUnescape(val)
			if !ok || strings.TrimSpace(k) == "" || kerr != nil || verr != nil {
				errs = append(errs, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %q is not key=value (pairs are comma-separated, values percent-encoded)", kv))
				break
			}
		}
	}
	return errors.Join(errs...)
}
