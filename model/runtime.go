package model

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/internal/ortversion"
)

// ONNX Runtime is one process-wide environment; these guard it.
var (
	envMu   sync.Mutex
	envPath string
)

// RequiredORT is the ONNX Runtime release rerankd is built and tested with
// (internal/ortversion, the one place it is spelled; scripts/setup.sh
// installs it). Other 1.2x+ releases usually work: the binding needs C API
// version 24 or newer.
const RequiredORT = ortversion.Required

// InitRuntime loads the ONNX Runtime shared library at libPath and creates
// the process-wide environment. Calling it again with the same path is a
// no-op; with another path it is an error (the library cannot be swapped in
// a running process).
func InitRuntime(libPath string) error {
	envMu.Lock()
	defer envMu.Unlock()
	if ort.IsInitialized() {
		if libPath != envPath {
			return fmt.Errorf("onnx runtime already loaded from %s, cannot load %s", envPath, libPath)
		}
		return nil
	}
	if _, err := os.Stat(libPath); err != nil {
		return fmt.Errorf("onnx runtime library not found at %s (run scripts/setup.sh, or set ORT_LIB to libonnxruntime.so.1 of release %s): %w",
			libPath, RequiredORT, err)
	}
	ort.SetSharedLibraryPath(libPath)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("onnx runtime at %s could not be initialised (rerankd needs release %s, C API >= 24; run scripts/setup.sh): %w",
			libPath, RequiredORT, err)
	}
	envPath = libPath
	return nil
}

// RuntimeVersion returns the loaded ONNX Runtime's version, or "" before
// InitRuntime.
func RuntimeVersion() string {
	if !ort.IsInitialized() {
		return ""
	}
	return ort.GetVersion()
}

// Provider names an execution provider.
type Provider string

// Execution providers. CUDA and TensorRT need a GPU build of ONNX Runtime
// (libonnxruntime_providers_cuda.so etc. of the same release beside the
// library: scripts/setup_gpu.sh installs ONNX Runtime 1.29.0's, built for
// CUDA 13 and cuDNN 9); without them opening a session fails with an error
// naming what is missing, never a crash.
const (
	ProviderCPU      Provider = "cpu"
	ProviderCUDA     Provider = "cuda"
	ProviderTensorRT Provider = "tensorrt"
)

// SessionConfig sets how a model is run.
type SessionConfig struct {
	// Provider is cpu (default), cuda or tensorrt.
	Provider Provider
	// DeviceID selects the GPU for cuda/tensorrt.
	DeviceID int
	// CUDA tunes the cuda provider; ignored by the others.
	CUDA CUDAOptions
	// IntraOpThreads is ONNX Runtime's thread count per run; 0 means one
	// per CPU this process may use (runtime.NumCPU). Not ORT's own default:
	// on this project's 2-vCPU machines ORT picked one thread, and a
	// 20-memory request ran at 0.61x the speed of two (rerankd-bench tune).
	IntraOpThreads int
	// Spinning keeps idle threads spinning between runs: lower latency for
	// back-to-back runs, a busy core when idle. Off costs ~25% on short
	// sequences (NOTES.md) but frees the CPU for the rest of the server.
	Spinning bool
	// DisablePrepacking skips weight prepacking: the kernels pack a
	// weight panel per call instead of keeping a packed copy, so a session
	// builds without the packing's CPU time and memory; what it costs per
	// run depends on the kernel (docs/perf/first-start.md: nothing measurable
	// for float32 MatMul, more for int8 MatMulInteger).
	DisablePrepacking bool
	// MemPattern is whether ONNX Runtime plans a run's activations as one
	// block per input shape and keeps the plan: MemPatternAuto (""), the
	// engine's choice: off for encoder graphs (OpenEncoderSession), whose
	// calls change shape nearly every time, so each new plan left a block
	// of another size behind in the CPU arena and the arena kept growing
	// (docs/perf/encoders-memory.md); on for the others, ONNX Runtime's
	// default. MemPatternOn or MemPatternOff force it.
	MemPattern MemPattern
	// SessionCacheDir, when set, keeps optimised sessions with their
	// prepacked weights under this folder (sessioncache.go): the first
	// open writes an entry (once, slower, about 1.5x the weights on disk),
	// later opens on this machine load it in about half the time, with
	// bit-identical scores. CPU only; "" builds every session from the
	// model's own graph.
	SessionCacheDir string
	// Prefetch starts reading the weights a session maps (its graph's
	// external data, embedding tables left out) while the session builds
	// (prefetch.go): a first start, with the files not in the page cache,
	// reads them in large requests alongside the CPU work instead of one
	// page fault at a time. Only a hint: the session is the same either way.
	Prefetch bool
	// ProfilePrefix, when set, makes ONNX Runtime write a per-node timing
	// trace (Chrome trace JSON) to PREFIX_<date>.json when the session
	// closes: where a graph's time goes, op by op (rerankd-bench bench
	// --ort-profile). Costs a little time per node; off by default.
	ProfilePrefix string
}

// MemPattern is SessionConfig.MemPattern's setting.
type MemPattern string

// MemPattern settings.
const (
	MemPatternAuto MemPattern = ""
	MemPatternOn   MemPattern = "on"
	MemPatternOff  MemPattern = "off"
)

// CUDAOptions are the CUDA execution provider's settings rerankd sets;
// the rest keep ONNX Runtime's defaults.
type CUDAOptions struct {
	// TF32 lets float32 matrix products run in TensorFloat-32 on GPUs that
	// have it (Ampere and later): faster, with scores that move away from
	// the CPU's. Off by default (use_tf32=0), so float32 on CUDA scores
	// like float32 on CPU; ONNX Runtime's own default is on.
	TF32 bool
	// MemLimitBytes caps the provider's memory arena on the device
	// (gpu_mem_limit); 0 leaves ONNX Runtime's default (no cap).
	MemLimitBytes int64
	// ArenaExtend is how the arena grows: "" (ONNX Runtime's default,
	// kNextPowerOfTwo), "next_power_of_two" or "same_as_requested" (grows
	// by what a run asks for: less memory held, more allocations).
	ArenaExtend string
}

// arenaStrategies maps CUDAOptions.ArenaExtend to ORT's option values.
var arenaStrategies = map[string]string{"next_power_of_two": "kNextPowerOfTwo", "same_as_requested": "kSameAsRequested"}

// providerOptions are the key/value pairs given to the CUDA provider.
func (c CUDAOptions) providerOptions(device int) map[string]string {
	tf32 := "0"
	if c.TF32 {
		tf32 = "1"
	}
	m := map[string]string{"device_id": fmt.Sprint(device), "use_tf32": tf32}
	if c.MemLimitBytes > 0 {
		m["gpu_mem_limit"] = fmt.Sprint(c.MemLimitBytes)
	}
	if c.ArenaExtend != "" {
		m["arena_extend_strategy"] = arenaStrategies[c.ArenaExtend]
	}
	return m
}

// defaultSpinning is DefaultSessionConfig's Spinning. This package's tests
// turn it off (main_test.go): their sessions run beside other test binaries,
// and spinning threads would take the cores those need.
var defaultSpinning = true

// DefaultSessionConfig returns CPU, one thread per CPU, spinning.
func DefaultSessionConfig() SessionConfig {
	return SessionConfig{Provider: ProviderCPU, Spinning: defaultSpinning}
}

// Validate reports every problem at once.
func (c SessionConfig) Validate() error {
	var errs []error
	switch c.Provider {
	case ProviderCPU, ProviderCUDA, ProviderTensorRT, "":
	default:
		errs = append(errs, fmt.Errorf("provider %q: want cpu, cuda or tensorrt", c.Provider))
	}
	if c.DeviceID < 0 {
		errs = append(errs, fmt.Errorf("device id %d: want >= 0", c.DeviceID))
	}
	if c.IntraOpThreads < 0 {
		errs = append(errs, fmt.Errorf("intra-op threads %d: want >= 0", c.IntraOpThreads))
	}
	switch c.MemPattern {
	case MemPatternAuto, MemPatternOn, MemPatternOff:
	default:
		errs = append(errs, fmt.Errorf("memory pattern %q: want on, off or empty (the engine's choice)", c.MemPattern))
	}
	if c.CUDA.MemLimitBytes < 0 {
		errs = append(errs, fmt.Errorf("gpu memory limit %d: want >= 0 (0: no limit)", c.CUDA.MemLimitBytes))
	}
	if _, ok := arenaStrategies[c.CUDA.ArenaExtend]; !ok && c.CUDA.ArenaExtend != "" {
		errs = append(errs, fmt.Errorf("arena extend strategy %q: want next_power_of_two or same_as_requested", c.CUDA.ArenaExtend))
	}
	return errors.Join(errs...)
}

func (c SessionConfig) options() (*ort.SessionOptions, error) {
	o, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*ort.SessionOptions, error) {
		release(o)
		return nil, err
	}
	threads := c.IntraOpThreads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	if err := o.SetIntraOpNumThreads(threads); err != nil {
		return fail(err)
	}
	spin := "0"
	if c.Spinning {
		spin = "1"
	}
	if err := o.AddSessionConfigEntry("session.intra_op.allow_spinning", spin); err != nil {
		return fail(err)
	}
	if c.DisablePrepacking {
		if err := o.AddSessionConfigEntry("session.disable_prepacking", "1"); err != nil {
			return fail(err)
		}
	}
	if c.MemPattern == MemPatternOff {
		if err := o.SetMemPattern(false); err != nil {
			return fail(err)
		}
	}
	if c.ProfilePrefix != "" {
		if err := o.EnableProfiling(c.ProfilePrefix); err != nil {
			return fail(fmt.Errorf("profiling to %s: %w", c.ProfilePrefix, err))
		}
	}
	switch c.Provider {
	case ProviderCUDA:
		if err := appendCUDA(o, c.CUDA.providerOptions(c.DeviceID)); err != nil {
			return fail(providerError(c.Provider, err))
		}
	case ProviderTensorRT:
		if err := appendTensorRT(o, c.DeviceID); err != nil {
			return fail(providerError(c.Provider, err))
		}
	}
	return o, nil
}

func appendCUDA(o *ort.SessionOptions, opts map[string]string) error {
	cuda, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return err
	}
	defer release(cuda)
	if err := cuda.Update(opts); err != nil {
		return err
	}
	return o.AppendExecutionProviderCUDA(cuda)
}

func appendTensorRT(o *ort.SessionOptions, device int) error {
	trt, err := ort.NewTensorRTProviderOptions()
	if err != nil {
		return err
	}
	defer release(trt)
	if err := trt.Update(map[string]string{"device_id": fmt.Sprint(device)}); err != nil {
		return err
	}
	return o.AppendExecutionProviderTensorRT(trt)
}

// ErrProviderUnavailable wraps failures to enable a GPU provider.
var ErrProviderUnavailable = errors.New("execution provider unavailable")

func providerError(p Provider, err error) error {
	what := "the GPU build of ONNX Runtime (libonnxruntime_providers_shared.so and libonnxruntime_providers_" +
		strings.ToLower(string(p)) + ".so beside the library; `make setup-gpu` installs ONNX Runtime " + GPUORT +
		"'s and serve finds it by default)"
	if p == ProviderCUDA {
		what += ", CUDA 13 and cuDNN 9 on the library path"
	}
	if lib := missingLibrary(err.Error()); lib != "" {
		return fmt.Errorf("%w: %s: %s is missing (not on the library path); %s needs %s: %w", ErrProviderUnavailable, p, lib, p, what, err)
	}
	return fmt.Errorf("%w: %s needs %s: %w", ErrProviderUnavailable, p, what, err)
}

// GPUORT is the ONNX Runtime release whose CUDA build scripts/setup_gpu.sh
// installs (the same C API as RequiredORT's for the binding).
const GPUORT = ortversion.GPU

// missingLib finds the library a dlopen error names.
var missingLib = regexp.MustCompile(`([A-Za-z0-9_.+-]+\.so(\.[0-9]+)*): cannot open shared object file`)

// missingLibrary is the shared library a loader message says it could not
// open, or "".
func missingLibrary(msg string) string {
	if m := missingLib.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// release frees an ONNX Runtime object. Its error is dropped on purpose:
// a failed release leaks memory in the C library and nothing in Go can act
// on it.
func release(d interface{ Destroy() error }) { _ = d.Destroy() }
