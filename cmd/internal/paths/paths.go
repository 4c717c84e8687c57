// Package paths is the one home of the environment for rerankd's commands
// (rerankd, eval): every variable they read is read here, and so are the
// rules for rerankd's folders. Library packages never read the
// environment (TestOneEnvironmentHome); internal/testenv reads the
// variables of tests only.
//
// The variables:
//
//   - RERANKD_CACHE, else XDG_CACHE_HOME, else HOME: CacheDir, where
//     scripts/setup.sh installs run-time files and converted models and
//     hub downloads are kept.
//   - ORT_LIB: ORTLib, the ONNX Runtime library (else the one beside the
//     executable, as release archives and the image ship it, else setup's;
//     ORTLibFor a GPU provider: setup-gpu's CUDA build first).
//   - RERANKD_TOKENIZER: Tokenizer, the default tokenizer folder (else
//     tokenizers/qwen3 beside the executable, else setup's).
//   - RERANKD_DATA, else XDG_DATA_HOME, else HOME: DataDir, the memories.
//   - RERANKD_<FLAG> for each of `rerankd serve`'s flags (RERANKD_STORE,
//     RERANKD_MAX_DOCUMENTS, ...): ApplyFlagEnv; a flag given wins.
//   - HF_ENDPOINT, HF_TOKEN or HUGGING_FACE_HUB_TOKEN: HubEndpoint and
//     HubToken, for downloads from the Hugging Face hub.
//   - OTEL_*: serve passes LookupEnv to tracing.FromEnv, which names them.
package paths

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerankd/rerankd/internal/ortversion"
)

// CacheDir is where scripts/setup.sh installs run-time files:
// $RERANKD_CACHE, else $XDG_CACHE_HOME/rerankd, else ~/.cache/rerankd.
// scripts/setup.sh, the Makefile and internal/testenv write the same rule;
// TestCacheRulesAgree holds them to it.
func CacheDir() string {
	if d := os.Getenv("RERANKD_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		base = filepath.Join(home(), ".cache")
	}
	return filepath.Join(base, "rerankd")
}

// ORTLibName is the ONNX Runtime library's file name, in setup's cache
// folder and beside the executable in a release archive or the image.
const ORTLibName = "libonnxruntime.so.1"

// TokenizerDir is the default tokenizer's folder below setup's cache and
// beside the executable in a release archive or the image.
const TokenizerDir = "tokenizers/qwen3"

// ORTLib is $ORT_LIB, else the library beside the running executable when
// there is one (a release archive, the image), else the library
// scripts/setup.sh installs, under the release ortversion.Required names
// (the one Go constant for it, without cgo; setup.sh's ORT_VERSION is
// checked against it by TestORTVersionOneSource).
func ORTLib() string {
	if p := os.Getenv("ORT_LIB"); p != "" {
		return p
	}
	if p := besideExecutable(ORTLibName); p != "" {
		return p
	}
	return filepath.Join(CacheDir(), "onnxruntime", ortversion.Required, ORTLibName)
}

// ORTGPULib is the CUDA build of ONNX Runtime that scripts/setup_gpu.sh
// (make setup-gpu) installs, release ortversion.GPU, with its CUDA provider
// beside it.
func ORTGPULib() string {
	return filepath.Join(CacheDir(), "onnxruntime-gpu", ortversion.GPU, ORTLibName)
}

// ORTLibFor is the default ONNX Runtime library for an execution provider:
// $ORT_LIB when set; for a GPU provider (cuda, tensorrt) the CUDA build
// setup-gpu installs when it is there; else ORTLib.
func ORTLibFor(provider string) string {
	if p := os.Getenv("ORT_LIB"); p != "" {
		return p
	}
	if provider != "" && provider != "cpu" {
		if _, err := os.Stat(ORTGPULib()); err == nil {
			return ORTGPULib()
		}
	}
	return ORTLib()
}

// Tokenizer is $RERANKD_TOKENIZER, else tokenizers/qwen3 beside the
// running executable when it has a tokenizer.json (a release archive, the
// image), else the Qwen3 tokenizer folder setup installs.
func Tokenizer() string {
	if p := os.Getenv("RERANKD_TOKENIZER"); p != "" {
		return p
	}
	if p := besideExecutable(filepath.Join(TokenizerDir, "tokenizer.json")); p != "" {
		return filepath.Dir(p)
	}
	return filepath.Join(CacheDir(), filepath.FromSlash(TokenizerDir))
}

// besideExecutable is rel below the running executable's folder (links
// resolved) when that exists, else "".
func besideExecutable(rel string) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return beside(exe, rel)
}

// beside is rel below exe's folder (exe's links resolved, so a link in
// /usr/local/bin to an unpacked archive finds the archive's files) when
// that exists, else "".
func beside(exe, rel string) string {
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	p := filepath.Join(filepath.Dir(exe), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// DataDir holds memories (data, not cache): $RERANKD_DATA, else
// $XDG_DATA_HOME/rerankd, else ~/.local/share/rerankd.
func DataDir() string {
	if d := os.Getenv("RERANKD_DATA"); d != "" {
		return d
	}
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		base = filepath.Join(home(), ".local", "share")
	}
	return filepath.Join(base, "rerankd")
}

func home() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return "."
	}
	return h
}

// LookupEnv is os.LookupEnv, for code that takes a lookup function
// (tracing.FromEnv) and tests that pass their own.
func LookupEnv(key string) (string, bool) { return os.LookupEnv(key) }

// FlagEnv is the variable standing in for the flag name: RERANKD_ and the
// name in upper case, '-' as '_' (max-documents: RERANKD_MAX_DOCUMENTS).
func FlagEnv(name string) string {
	return "RERANKD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// ApplyFlagEnv fills each flag of fs not given on the command line from
// its FlagEnv variable when that is set (even to ""), after fs.Parse. It
// returns every value a flag refuses, naming the variable.
func ApplyFlagEnv(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		env := FlagEnv(f.Name)
		if v, ok := os.LookupEnv(env); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			}
		}
	})
	return errors.Join(errs...)
}

// HubEndpoint is $HF_ENDPOINT, else def (the hub's own address).
func HubEndpoint(def string) string {
	if e := os.Getenv("HF_ENDPOINT"); e != "" {
		return e
	}
	return def
}

// HubToken is $HF_TOKEN, else $HUGGING_FACE_HUB_TOKEN, else "" (no token).
func HubToken() string {
	if t := os.Getenv("HF_TOKEN"); t != "" {
		return t
	}
	return os.Getenv("HUGGING_FACE_HUB_TOKEN")
}
