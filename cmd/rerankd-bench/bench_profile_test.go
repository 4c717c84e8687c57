package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadProfile: the newest trace written since the bench started is
// the one summarised; an older one, a missing one or a broken one is an
// error that names the prefix or the file.
func TestReadProfile(t *testing.T) {
	const trace = `[{"cat":"Session","name":"model_run","dur":2000000},
{"cat":"Node","name":"g_kernel_time","dur":1500000,"args":{"op_name":"Gemm","input_type_shape":[{"float":[1000,1000]}],"output_type_shape":[{"float":[1000,1000]}]}},
{"cat":"Node","name":"a_kernel_time","dur":500000,"args":{"op_name":"Add"}}]`
	dir := t.TempDir()
	prefix := filepath.Join(dir, "p")
	start := time.Now()
	write := func(name, body string, at time.Time) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("p_old.json", `not read`, start.Add(-time.Hour))
	if _, err := readProfile(prefix, start, 100); !errors.Is(err, errNoTrace) || !strings.Contains(err.Error(), prefix) {
		t.Fatalf("only an old trace: %v", err)
	}
	write("q_new.json", trace, start.Add(time.Second)) // another prefix
	newest := write("p_new.json", trace, start.Add(2*time.Second))
	write("p_between.json", `not read either`, start.Add(time.Second))
	p, err := readProfile(prefix, start, 2)
	if err != nil {
		t.Fatal(err)
	}
	// 2 GFLOP in 1.5 s of Gemm against a 2 GFLOP/s peak.
	if p.File != newest || p.Runs != 1 || p.MatrixShare != 0.75 || p.MatrixEfficiency < 0.666 || p.MatrixEfficiency > 0.667 {
		t.Errorf("got %+v", p)
	}
	var out strings.Builder
	if err := printProfile(&out, p); err != nil || !strings.Contains(out.String(), "matrix products 75.0% of kernel time at 1.3 GFLOP/s, 0.67 of the peak") ||
		!strings.Contains(out.String(), "Gemm 75.0% (1500 ms), Add 25.0% (500 ms)") {
		t.Errorf("printed %q, %v", out.String(), err)
	}
	write("p_newer.json", `[{"cat":`, start.Add(3*time.Second))
	if _, err := readProfile(prefix, start, 2); err == nil || !strings.Contains(err.Error(), "p_newer.json") {
		t.Errorf("broken trace: %v", err)
	}
}
