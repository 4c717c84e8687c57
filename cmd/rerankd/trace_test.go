package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/rerankd/rerankd/internal/otlptest"
	"github.com/rerankd/rerankd/internal/pgtest"
)

// TestMain lets the test binary stand in for rerankd in a child process
// (RERANKD_TEST_AS_CLI=1), so a test can signal a real serve process; it
// also owns the PostgreSQL server the store tests share.
func TestMain(m *testing.M) {
	if os.Getenv("RERANKD_TEST_AS_CLI") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	pgtest.Main(m) // runs the tests, then stops the shared PostgreSQL server

}

// TestServeTracesFromEnv: `rerankd serve` configured only by the standard
// OTEL_* variables exports a request's spans under the caller's
// traceparent, over HTTP/protobuf and gRPC, and flushes them on SIGTERM.
func TestServeTracesFromEnv(t *testing.T) {
	rcv := otlptest.Start(t)
	for _, tc := range []struct{ name, protocol, endpoint string }{
		// The base endpoint: the exporter appends /v1/traces, as the
		// specification says for OTEL_EXPORTER_OTLP_ENDPOINT.
		{"http", "http/protobuf", strings.TrimSuffix(rcv.HTTPURL, "/v1/traces")},
		{"grpc", "grpc", rcv.GRPCURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--store", filepath.Join(t.TempDir(), "m.db"))
			cmd.Env = append(os.Environ(), "RERANKD_TEST_AS_CLI=1", "OTEL_EXPORTER_OTLP_ENDPOINT="+tc.endpoint,
				"OTEL_EXPORTER_OTLP_PROTOCOL="+tc.protocol, "OTEL_SERVICE_NAME=rerankd-"+tc.name)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("no banner: %v; stderr %s", err, stderr.String())
			}
			m := regexp.MustCompile(`on (http://\S+)`).FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("banner %q", line)
			}
			traceID, parentID := fmt.Sprintf("%032x", 0x5eed), fmt.Sprintf("%016x", 0xbeef)
			req := `{"query":"narwhal question","documents":["narwhal answer","unrelated"]}`
			resp := httpPost(t, m[1]+"/rerank", req, "traceparent", "00-"+traceID+"-"+parentID+"-01")
			if resp != 200 {
				t.Fatalf("rerank: %d", resp)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("serve exited with %v; stderr %s", err, stderr.String())
			}
			var got []otlptest.Span
			for _, s := range rcv.Spans() {
				if s.TraceID == traceID && s.Resource["service.name"] == "rerankd-"+tc.name {
					got = append(got, s)
				}
			}
			names := map[string]bool{}
			for _, s := range got {
				names[s.Name] = true
				if s.Name == "POST /rerank" && s.ParentSpanID != parentID {
					t.Errorf("server span parent %s, want the traceparent's %s", s.ParentSpanID, parentID)
				}
			}
			if !names["POST /rerank"] || !names["rerankd.score"] {
				t.Fatalf("spans of the trace after SIGTERM: %v (stderr %s)", names, stderr.String())
			}
			if bytes.Contains(rcv.Raw(), []byte("narwhal")) {
				t.Error("request text in the exported spans")
			}
			if !strings.Contains(stderr.String(), "tracing on") {
				t.Errorf("no start-up line saying tracing is on: %s", stderr.String())
			}
		})
	}
}

// httpPost sends a JSON body with header pairs and returns the status.
func httpPost(t *testing.T, url, body string, headers ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
