package model

import (
	"maps"
	"strings"
	"testing"
)

// TestCUDAProviderOptions: TF32 off unless asked for; the memory cap and
// arena strategy passed only when set, under ORT's names.
func TestCUDAProviderOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts CUDAOptions
		dev  int
		want map[string]string
	}{
		{"default", CUDAOptions{}, 0, map[string]string{"device_id": "0", "use_tf32": "0"}},
		{"tf32 on, device 1", CUDAOptions{TF32: true}, 1, map[string]string{"device_id": "1", "use_tf32": "1"}},
		{"memory and arena", CUDAOptions{MemLimitBytes: 2 << 30, ArenaExtend: "same_as_requested"}, 0,
			map[string]string{"device_id": "0", "use_tf32": "0", "gpu_mem_limit": "2147483648", "arena_extend_strategy": "kSameAsRequested"}},
	} {
		if got := tc.opts.providerOptions(tc.dev); !maps.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSessionConfigValidateCUDA: every bad CUDA setting is named at once.
func TestSessionConfigValidateCUDA(t *testing.T) {
	c := DefaultSessionConfig()
	c.Provider, c.CUDA = ProviderCUDA, CUDAOptions{MemLimitBytes: -1, ArenaExtend: "doubling"}
	err := c.Validate()
	for _, want := range []string{"gpu memory limit -1", `arena extend strategy "doubling"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want it to name %q", err, want)
		}
	}
	c.CUDA = CUDAOptions{MemLimitBytes: 1 << 30, ArenaExtend: "next_power_of_two", TF32: true}
	if err := c.Validate(); err != nil {
		t.Errorf("good CUDA options: %v", err)
	}
}

// TestProviderErrorNamesLibrary: a loader failure names the library that
// is missing and the install command.
func TestProviderErrorNamesLibrary(t *testing.T) {
	for _, tc := range []struct{ msg, lib string }{
		{"Failed to load library /x/libonnxruntime_providers_cuda.so with error: libcublasLt.so.13: cannot open shared object file: No such file or directory", "libcublasLt.so.13"},
		{"libcudnn.so.9: cannot open shared object file", "libcudnn.so.9"},
		{"CUDA failure 35: CUDA driver version is insufficient", ""},
	} {
		if got := missingLibrary(tc.msg); got != tc.lib {
			t.Errorf("missingLibrary(%q) = %q, want %q", tc.msg, got, tc.lib)
		}
		err := providerError(ProviderCUDA, errString(tc.msg))
		if !strings.Contains(err.Error(), "make setup-gpu") || (tc.lib != "" && !strings.Contains(err.Error(), tc.lib+" is missing")) {
			t.Errorf("providerError(%q) = %v", tc.msg, err)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
