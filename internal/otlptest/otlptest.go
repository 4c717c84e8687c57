// Package otlptest is an in-process OTLP trace receiver for tests: it
// accepts exports over HTTP/protobuf and gRPC, decodes them with the
// OpenTelemetry protocol's own generated types, and keeps the raw payloads
// so a test can prove no request text left the process.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened for assertions.
type Span struct {
	Name                          string
	TraceID, SpanID, ParentSpanID string // hex; ParentSpanID "" for a root
	Kind                          string // e.g. "SPAN_KIND_SERVER"
	Error                         bool   // status code ERROR
	Attrs                         map[string]string
	Links                         []Link
	Resource                      map[string]string
	Start, End                    time.Time
}

// Link is a span link.
type Link struct{ TraceID, SpanID string }

// Receiver collects what exporters send.
type Receiver struct {
	// HTTPURL is the traces URL for OTLP/HTTP (…/v1/traces).
	HTTPURL string
	// GRPCURL is the endpoint URL for OTLP/gRPC (http://host:port).
	GRPCURL string

	mu    sync.Mutex
	spans []Span
	raw   bytes.Buffer
}

// Start runs both receivers on loopback ports until the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(r.serveHTTP), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(hl) }()
	r.HTTPURL = "http://" + hl.Addr().String() + "/v1/traces"

	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(gs, grpcService{r: r})
	go func() { _ = gs.Serve(gl) }()
	r.GRPCURL = "http://" + gl.Addr().String()
	t.Cleanup(func() {
		gs.Stop()
		_ = hs.Close()
	})
	return r
}

func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP traces export", http.StatusNotFound)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &msg); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.add(&msg, data)
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

type grpcService struct {
	coltrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (g grpcService) Export(_ context.Context, msg *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	data, err := proto.Marshal(msg)
	if err != nil {
		return nil, err
	}
	g.r.add(msg, data)
	return &coltrace.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) add(msg *coltrace.ExportTraceServiceRequest, raw []byte) {
	var got []Span
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), Kind: s.GetKind().String(),
					Error: s.GetStatus().GetCode().String() == "STATUS_CODE_ERROR", Attrs: attrs(s.GetAttributes()), Resource: res,
					Start: time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano()))}
				for _, l := range s.GetLinks() {
					sp.Links = append(sp.Links, Link{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId())})
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spans = append(r.spans, got...)
	r.raw.Write(raw)
}

// attrs renders attribute values as strings (ints in decimal).
func attrs(kvs []*common.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *common.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		default:
			m[kv.GetKey()] = protoText(v)
		}
	}
	return m
}

func protoText(v *common.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *common.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	return v.String()
}

// Spans returns what has arrived so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Raw returns every payload received, concatenated.
func (r *Receiver) Raw() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.raw.Bytes())
}

// WaitFor polls until done holds for the spans received or timeout passes,
// and returns the spans either way.
func (r *Receiver) WaitFor(done func([]Span) bool, timeout time.Duration) []Span {
	deadline := time.Now().Add(timeout)
	for {
		s := r.Spans()
		if done(s) || time.Now().After(deadline) {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Named returns the spans called name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}
