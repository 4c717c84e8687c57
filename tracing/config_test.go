package tracing

import (
	"strings"
	"testing"
)

func TestFromEnv(t *testing.T) {
	cases := []struct {
		name     string
		env      map[string]string
		enabled  bool
		protocol string
		err      string // substring of the error; "" for none
	}{
		{name: "nothing set: off", env: nil, enabled: false, protocol: ProtocolHTTP},
		{name: "endpoint turns it on", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, enabled: true, protocol: ProtocolHTTP},
		{name: "traces endpoint turns it on", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, enabled: true, protocol: ProtocolHTTP},
		{name: "exporter otlp without endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, enabled: true, protocol: ProtocolHTTP},
		{name: "exporter none wins over endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, enabled: false, protocol: ProtocolHTTP},
		{name: "sdk disabled wins", env: map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, enabled: false, protocol: ProtocolHTTP},
		{name: "sdk disabled false", env: map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, enabled: true, protocol: ProtocolHTTP},
		{name: "grpc protocol", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, enabled: true, protocol: ProtocolGRPC},
		{name: "traces protocol wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, enabled: true, protocol: ProtocolHTTP},
		{name: "http/json refused", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: "no JSON encoding"},
		{name: "unknown protocol", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}, err: `"carrier-pigeon"`},
		{name: "console exporter refused", env: map[string]string{"OTEL_TRACES_EXPORTER": "console"}, err: "OTLP only"},
		{name: "sampler unknown", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "bogus"}, err: `OTEL_TRACES_SAMPLER="bogus"`},
		{name: "sampler known, any case", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "ParentBased_TraceIDRatio", "OTEL_TRACES_SAMPLER_ARG": "0.25"}, enabled: true, protocol: ProtocolHTTP},
		{name: "sampler ratio out of range", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, err: "OTEL_TRACES_SAMPLER_ARG"},
		{name: "endpoint without scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, err: "OTEL_EXPORTER_OTLP_ENDPOINT="},
		{name: "endpoint garbage", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://[::1"}, err: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="},
		{name: "resource attributes malformed", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_RESOURCE_ATTRIBUTES": "team=search,broken"}, err: "OTEL_RESOURCE_ATTRIBUTES"},
		{name: "resource attributes bad escape", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_RESOURCE_ATTRIBUTES": "a=%ZZ"}, err: "OTEL_RESOURCE_ATTRIBUTES"},
		{name: "resource attributes fine", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_RESOURCE_ATTRIBUTES": "team=search,deployment.environment=prod%20eu"}, enabled: true, protocol: ProtocolHTTP},
		{name: "protocol alone does not turn it on", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, enabled: false, protocol: ProtocolGRPC},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			c, err := FromEnv(DefaultConfig(), lookup)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Enabled != tc.enabled || c.Protocol != tc.protocol {
				t.Errorf("enabled %v protocol %q, want %v %q", c.Enabled, c.Protocol, tc.enabled, tc.protocol)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := Config{Enabled: true, Protocol: "x", Endpoint: "collector:4318", ServiceName: ""}
	err := c.Validate()
	for _, want := range []string{`protocol "x"`, `endpoint "collector:4318"`, "service name"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}
