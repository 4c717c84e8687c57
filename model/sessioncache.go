package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/internal/atomicfile"
)

// Optimised-session cache. Building a session spends most of its time
// prepacking weights into the CPU kernels' layout (about 2 s of 2.5 s for
// a 0.6B model); graph optimisation is the rest. ONNX Runtime can write
// the optimised graph with its prepacked weights beside it
// (session.save_external_prepacked_constant_initializers), and a session
// built from that file with optimisation off computes the same scores bit
// for bit (measured on the 0.6B shape) and starts in about half the time.
// The file holds the prepacked copies as well as the weights (4.1 GB for
// 2.8 GB of weights), and the packed layout belongs to this ONNX Runtime
// release and this CPU, so each entry is keyed by the graph, its weight
// files, the runtime's version, the CPU's model and flags and the session
// settings that change the graph; an entry for another key is never read.

// sessionCacheData is the name of an entry's external-data file.
const sessionCacheData = "model.onnx.data"

// sessionCacheKey names path's entry: a hash of the graph and every
// external-data file in its folder (path, size, modification time), the
// ONNX Runtime version, the CPU and the provider.
func sessionCacheKey(path string, cfg SessionConfig) (string, error) {
	h := sha256.New()
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	files := []string{abs}
	data, _ := filepath.Glob(filepath.Join(filepath.Dir(abs), "*.data"))
	files = append(files, data...)
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", f, st.Size(), st.ModTime().UnixNano())
	}
	fmt.Fprintf(h, "ort %s\x00cpu %s\x00provider %s\x00arch %s\x00", RuntimeVersion(), cpuSignature(), cfg.Provider, runtime.GOARCH)
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// cpuSignature is the CPU's model name and feature flags (which kernels,
// so which packed layouts, ONNX Runtime picks), from /proc/cpuinfo.
func cpuSignature() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	var model, flags string
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			model = strings.TrimSpace(v)
		case "flags", "Features":
			flags = strings.TrimSpace(v)
		}
	}
	return model + "|" + flags
}

// openSession builds the session for path, through the optimised-session
// cache when cfg.SessionCacheDir is set: an entry for this key is loaded
// with optimisation off; without one, the session is built as usual while
// ONNX Runtime writes the entry, which is then moved into place whole. A
// failure of the cache itself (a full disk, say) is logged and the session
// built without it: the cache only saves time.
func openSession(path string, inputs, outputs []string, cfg SessionConfig) (*ort.DynamicAdvancedSession, error) {
	s, _, err := openSessionFrom(path, inputs, outputs, cfg)
	return s, err
}

// Where openSessionFrom's session came from.
const (
	fromGraph = "graph"  // the model's own graph, no cache
	fromSaved = "saved"  // the model's own graph, and a new entry written
	fromCache = "cached" // an entry
)

func openSessionFrom(path string, inputs, outputs []string, cfg SessionConfig) (*ort.DynamicAdvancedSession, string, error) {
	if cfg.SessionCacheDir == "" || cfg.Provider != ProviderCPU && cfg.Provider != "" {
		if cfg.Prefetch {
			go prefetchGraph(path, false)
		}
		s, err := plainSession(path, inputs, outputs, cfg, "")
		return s, fromGraph, err
	}
	key, err := sessionCacheKey(path, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("session cache: %w", err)
	}
	entry := filepath.Join(cfg.SessionCacheDir, key)
	cached := filepath.Join(entry, filepath.Base(path))
	if _, err := os.Stat(cached); err == nil {
		if cfg.Prefetch {
			go prefetchGraph(cached, true)
		}
		s, err := cachedSession(cached, inputs, outputs, cfg)
		if err == nil {
			return s, fromCache, nil
		}
		slog.Warn("session cache entry unusable: rebuilding it", "entry", entry, "err", err)
		_ = os.RemoveAll(entry)
	}
	tmp, err := os.MkdirTemp(cfg.SessionCacheDir, ".building-")
	if err != nil && os.MkdirAll(cfg.SessionCacheDir, 0o755) == nil {
		tmp, err = os.MkdirTemp(cfg.SessionCacheDir, ".building-")
	}
	if err != nil {
		slog.Warn("session cache unavailable", "dir", cfg.SessionCacheDir, "err", err)
		s, err := plainSession(path, inputs, outputs, cfg, "")
		return s, fromGraph, err
	}
	if cfg.Prefetch {
		go prefetchGraph(path, false)
	}
	s, err := plainSession(path, inputs, outputs, cfg, filepath.Join(tmp, filepath.Base(path)))
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, "", err
	}
	// A full disk, or another process finishing the same entry first,
	// costs only the entry: the session itself is good.
	if !keepEntry(tmp, entry) {
		_ = os.RemoveAll(tmp)
		return s, fromGraph, nil
	}
	return s, fromSaved, nil
}

// plainSession builds a session from the original graph; with save set,
// ONNX Runtime also writes the optimised graph and its prepacked weights
// there.
func plainSession(path string, inputs, outputs []string, cfg SessionConfig, save string) (*ort.DynamicAdvancedSession, error) {
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	defer release(opts)
	if save != "" {
		for k, v := range map[string]string{
			"session.optimized_model_external_initializers_file_name":         sessionCacheData,
			"session.optimized_model_external_initializers_min_size_in_bytes": "1024",
			"session.save_external_prepacked_constant_initializers":           "1",
		} {
			if err := opts.AddSessionConfigEntry(k, v); err != nil {
				return nil, err
			}
		}
		if err := opts.SetOptimizedModelFilePath(save); err != nil {
			return nil, err
		}
	}
	s, err := ort.NewDynamicAdvancedSession(path, inputs, outputs, opts)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// cachedSession loads an entry: already optimised, so optimisation is off
// (running it again could rewrite the saved graph's fused nodes).
func cachedSession(path string, inputs, outputs []string, cfg SessionConfig) (*ort.DynamicAdvancedSession, error) {
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	defer release(opts)
	if err := opts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelDisableAll); err != nil {
		return nil, err
	}
	return ort.NewDynamicAdvancedSession(path, inputs, outputs, opts)
}

// keepEntry flushes the entry built in tmp and moves it into place
// (atomicfile.Rename: every file and the folder fsynced, renamed, the
// cache folder fsynced), reporting whether it is there now.
func keepEntry(tmp, entry string) bool {
	return atomicfile.Rename(tmp, entry) == nil
}
