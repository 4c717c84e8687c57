// Package device is the one definition of the flags that choose where a
// model runs, for every rerankd tool that runs one: --provider, --device
// and the CUDA provider's settings (--cuda-tf32, --gpu-mem-limit-mb,
// --cuda-arena-extend), and of the ONNX Runtime library a provider gets
// when --ort-lib is not given (paths.ORTLibFor: the CUDA build that
// `make setup-gpu` installs, for cuda and tensorrt).
package device

import (
	"flag"
	"strconv"

	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/model"
)

// Flags are the parsed values; Define registers them.
type Flags struct {
	// Provider is cpu, cuda or tensorrt; Device the GPU's id.
	Provider string
	Device   int
	// TF32, MemLimitMB and ArenaExtend are model.CUDAOptions' fields.
	TF32        bool
	MemLimitMB  int
	ArenaExtend string

	fs *flag.FlagSet
}

// Define registers the flags on fs.
func Define(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.StringVar(&f.Provider, "provider", "cpu", "execution provider: cpu, cuda or tensorrt (cuda: make setup-gpu installs the CUDA build of ONNX Runtime, found by default)")
	fs.IntVar(&f.Device, "device", 0, "GPU device id for cuda/tensorrt")
	fs.BoolVar(&f.TF32, "cuda-tf32", false, "cuda: let float32 matrix products run in TF32 (faster on Ampere and later; scores move away from the CPU's)")
	fs.IntVar(&f.MemLimitMB, "gpu-mem-limit-mb", 0, "cuda: cap on the provider's GPU memory arena in MiB (0: no cap)")
	fs.StringVar(&f.ArenaExtend, "cuda-arena-extend", "", "cuda: how the GPU arena grows: next_power_of_two (default) or same_as_requested (less memory held)")
	return f
}

// Apply sets the provider, device and CUDA settings of c (validated by
// c.Validate).
func (f *Flags) Apply(c *model.SessionConfig) {
	c.Provider, c.DeviceID, c.CUDA = model.Provider(f.Provider), f.Device, f.CUDA()
}

// CUDA is the CUDA provider's settings the flags give.
func (f *Flags) CUDA() model.CUDAOptions {
	return model.CUDAOptions{TF32: f.TF32, MemLimitBytes: int64(f.MemLimitMB) << 20, ArenaExtend: f.ArenaExtend}
}

// ORTLib is the library to load, after parsing: lib when --ort-lib was
// set on the flag set (on the command line or from its environment
// variable), else the default for the provider (paths.ORTLibFor).
func (f *Flags) ORTLib(lib string) string {
	given := false
	f.fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "ort-lib" })
	if given {
		return lib
	}
	return paths.ORTLibFor(f.Provider)
}

// Args are the flags as command-line arguments, for a child `rerankd
// serve` a lab tool starts; none for nil (serve's defaults).
func (f *Flags) Args() []string {
	if f == nil {
		return nil
	}
	a := []string{"--provider", f.Provider, "--device", strconv.Itoa(f.Device)}
	if f.TF32 {
		a = append(a, "--cuda-tf32")
	}
	if f.MemLimitMB > 0 {
		a = append(a, "--gpu-mem-limit-mb", strconv.Itoa(f.MemLimitMB))
	}
	if f.ArenaExtend != "" {
		a = append(a, "--cuda-arena-extend", f.ArenaExtend)
	}
	return a
}

// CopyFrom sets f's values to from's (a lab tool composing serve's flags
// in process); f keeps its own flag set. A nil from changes nothing.
func (f *Flags) CopyFrom(from *Flags) {
	if from == nil {
		return
	}
	fs := f.fs
	*f = *from
	f.fs = fs
}
