package paths

import (
	"path/filepath"
	"testing"

	"github.com/rerankd/rerankd/model"
)

func TestPaths(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		got  func() string
		want string
	}{
		{"cache from RERANKD_CACHE", map[string]string{"RERANKD_CACHE": "/c"}, CacheDir, "/c"},
		{"cache from XDG", map[string]string{"RERANKD_CACHE": "", "XDG_CACHE_HOME": "/x"}, CacheDir, "/x/rerankd"},
		{"cache from HOME", map[string]string{"RERANKD_CACHE": "", "XDG_CACHE_HOME": "", "HOME": "/h"}, CacheDir, "/h/.cache/rerankd"},
		{"ORT override", map[string]string{"ORT_LIB": "/lib.so"}, ORTLib, "/lib.so"},
		{"ORT default", map[string]string{"ORT_LIB": "", "RERANKD_CACHE": "/c"}, ORTLib, filepath.Join("/c/onnxruntime", model.RequiredORT, "libonnxruntime.so.1")},
		{"tokenizer default", map[string]string{"RERANKD_TOKENIZER": "", "RERANKD_CACHE": "/c"}, Tokenizer, "/c/tokenizers/qwen3"},
		{"data from XDG", map[string]string{"RERANKD_DATA": "", "XDG_DATA_HOME": "/d"}, DataDir, "/d/rerankd"},
		{"data from HOME", map[string]string{"RERANKD_DATA": "", "XDG_DATA_HOME": "", "HOME": "/h"}, DataDir, "/h/.local/share/rerankd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if got := tc.got(); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
