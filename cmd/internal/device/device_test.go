package device

import (
	"flag"
	"slices"
	"testing"

	"github.com/rerankd/rerankd/model"
)

// TestFlags: parsed values reach the session config and a child's
// arguments; --ort-lib given wins over the provider's default.
func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	lib := fs.String("ort-lib", "/cpu.so", "")
	f := Define(fs)
	if err := fs.Parse([]string{"--provider", "cuda", "--device", "2", "--cuda-tf32", "--gpu-mem-limit-mb", "512", "--cuda-arena-extend", "same_as_requested"}); err != nil {
		t.Fatal(err)
	}
	var c model.SessionConfig
	f.Apply(&c)
	want := model.CUDAOptions{TF32: true, MemLimitBytes: 512 << 20, ArenaExtend: "same_as_requested"}
	if c.Provider != model.ProviderCUDA || c.DeviceID != 2 || c.CUDA != want {
		t.Errorf("Apply: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
	args := []string{"--provider", "cuda", "--device", "2", "--cuda-tf32", "--gpu-mem-limit-mb", "512", "--cuda-arena-extend", "same_as_requested"}
	if got := f.Args(); !slices.Equal(got, args) {
		t.Errorf("Args %v, want %v", got, args)
	}
	t.Setenv("ORT_LIB", "/env.so")
	if got := f.ORTLib(*lib); got != "/env.so" { // not given: the provider's default, ORT_LIB first
		t.Errorf("ORTLib without --ort-lib: %s", got)
	}
	if err := fs.Parse([]string{"--ort-lib", "/given.so"}); err != nil {
		t.Fatal(err)
	}
	if got := f.ORTLib(*lib); got != "/given.so" {
		t.Errorf("ORTLib with --ort-lib: %s", got)
	}
	var nilFlags *Flags
	if nilFlags.Args() != nil {
		t.Error("nil Args")
	}
	g := Define(flag.NewFlagSet("y", flag.ContinueOnError))
	g.CopyFrom(f)
	if g.Provider != "cuda" || g.fs == f.fs {
		t.Errorf("CopyFrom: %+v", g)
	}
}
