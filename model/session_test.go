package model

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
)

func TestRuntimeLoaded(t *testing.T) {
	if v := RuntimeVersion(); !strings.HasPrefix(v, "1.") {
		t.Fatalf("RuntimeVersion() = %q", v)
	}
	if err := InitRuntime(testenv.ORTLib()); err != nil {
		t.Errorf("second InitRuntime with the same path: %v", err)
	}
	if err := InitRuntime("/other/libonnxruntime.so"); err == nil {
		t.Error("InitRuntime with another path after loading: want an error")
	}
}

// TestOpenSessionBadFiles: corrupt, truncated, empty and missing model files
// give ErrIncompatibleModel or a clear error, never a crash.
func TestOpenSessionBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct{ name, path string }{
		{"missing", filepath.Join(dir, "none.onnx")},
		{"empty", write("empty.onnx", nil)},
		{"garbage", write("garbage.onnx", []byte("this is not a protobuf \x00\x01\x02"))},
		{"json", write("json.onnx", []byte(`{"model": "nope"}`))},
	}
	for _, c := range cases {
		s, err := OpenSession(c.path, SessionSpec{YesID: 9693, NoID: 2152}, DefaultSessionConfig())
		if err == nil {
			s.Close()
			t.Errorf("%s: opened, want an error", c.name)
			continue
		}
		if !errors.Is(err, ErrIncompatibleModel) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error %q should be ErrIncompatibleModel and name the file", c.name, err)
		}
	}
}

// TestProviderUnavailable: the CPU-only library has no CUDA/TensorRT
// provider; asking for one is a clear error.
func TestProviderUnavailable(t *testing.T) {
	for _, p := range []Provider{ProviderCUDA, ProviderTensorRT} {
		cfg := DefaultSessionConfig()
		cfg.Provider = p
		o, err := cfg.options()
		if err == nil {
			release(o)
			t.Skipf("%s provider is available on this machine", p)
		}
		if !errors.Is(err, ErrProviderUnavailable) || !strings.Contains(err.Error(), "providers_") {
			t.Errorf("%s: error %q should be ErrProviderUnavailable and name the library", p, err)
		}
	}
}

func TestSessionConfigValidate(t *testing.T) {
	err := SessionConfig{Provider: "tpu", DeviceID: -1, IntraOpThreads: -2, MemPattern: "sometimes"}.Validate()
	for _, want := range []string{"tpu", "device id", "threads", "memory pattern"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error %v should mention %q", err, want)
		}
	}
}
