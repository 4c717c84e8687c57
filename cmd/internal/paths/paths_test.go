package paths

import (
	"os"
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

// TestBeside: a release archive's layout (library and tokenizer beside
// the executable) is found through a link to the executable; a folder
// without them gives "".
func TestBeside(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "rerankd")
	for _, f := range []string{exe, filepath.Join(dir, ORTLibName), filepath.Join(dir, TokenizerDir, "tokenizer.json")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "rerankd")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		exe, rel, want string
	}{
		{exe, ORTLibName, filepath.Join(dir, ORTLibName)},
		{link, ORTLibName, filepath.Join(dir, ORTLibName)},
		{link, TokenizerDir + "/tokenizer.json", filepath.Join(dir, TokenizerDir, "tokenizer.json")},
		{filepath.Join(t.TempDir(), "rerankd"), ORTLibName, ""},
	}
	for _, tc := range tests {
		if got := beside(tc.exe, tc.rel); got != tc.want {
			t.Errorf("beside(%s, %s) = %q, want %q", tc.exe, tc.rel, got, tc.want)
		}
	}
}

// TestORTLibFor: a GPU provider gets setup-gpu's CUDA build when it is
// installed, the CPU library otherwise; ORT_LIB wins for every provider.
func TestORTLibFor(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("RERANKD_CACHE", cache)
	t.Setenv("ORT_LIB", "")
	cpu := ORTLib()
	gpu := filepath.Join(cache, "onnxruntime-gpu", model.GPUORT, ORTLibName)
	if ORTGPULib() != gpu {
		t.Fatalf("ORTGPULib %s, want %s", ORTGPULib(), gpu)
	}
	check := func(when, provider, want string) {
		t.Helper()
		if got := ORTLibFor(provider); got != want {
			t.Errorf("%s: ORTLibFor(%q) = %s, want %s", when, provider, got, want)
		}
	}
	check("not installed", "cuda", cpu)
	if err := os.MkdirAll(filepath.Dir(gpu), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gpu, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("installed", "cuda", gpu)
	check("installed", "tensorrt", gpu)
	check("installed", "cpu", cpu)
	check("installed", "", cpu)
	t.Setenv("ORT_LIB", "/mine.so")
	check("ORT_LIB set", "cuda", "/mine.so")
}
