package ortprof

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current summaries")

func dims(d ...int) []map[string][]int { return []map[string][]int{{"float": d}} }

func TestFlops(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out []map[string][]int
		want    float64
	}{
		{"gemm, weights prepacked", dims(1092, 1024), dims(1092, 3072), 2 * 1092 * 1024 * 3072},
		{"gemm, both inputs listed", append(dims(4, 8), dims(16, 8)...), dims(4, 16), 2 * 4 * 8 * 16},
		{"batched attention scores", dims(20, 8, 2, 54, 128), dims(20, 8, 2, 54, 128), 2 * 20 * 8 * 2 * 54 * 128 * 128},
		{"broadcast B", dims(8, 2, 74, 128), dims(8, 2, 74, 200), 2 * 8 * 2 * 74 * 200 * 128},
		{"transposed A", dims(64, 10), dims(10, 32), 2 * 10 * 32 * 64},
		{"vector A", dims(1024), dims(1, 8), 0},
		{"no shapes", nil, nil, 0},
		{"empty shape map", []map[string][]int{{}}, dims(2, 2), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := flops(c.in, c.out); got != c.want {
				t.Errorf("flops = %g, want %g", got, c.want)
			}
		})
	}
}

// TestAttentionFLOPs: an Attention node counts its two products over the
// keys each query sees, read from the shapes ONNX Runtime's trace gives
// (the two nodes below are from one: the prefix's, with past and present
// K/V, and a continuation bucket's, with a mask and no past).
func TestAttentionFLOPs(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out []map[string][]int
		want    float64
	}{
		{"prefix, past 0: present keys", append(dims(1, 74, 2048), append(dims(1, 74, 1024), append(dims(1, 74, 1024), append(dims(1, 8, 0, 128), dims(1, 8, 0, 128)...)...)...)...),
			append(dims(1, 74, 2048), append(dims(1, 8, 74, 128), dims(1, 8, 74, 128)...)...), 4 * 74 * 2048 * 74},
		{"prefix after a cached past", append(dims(1, 12, 2048), append(dims(1, 12, 1024), append(dims(1, 12, 1024), append(dims(1, 8, 62, 128), dims(1, 8, 62, 128)...)...)...)...),
			append(dims(1, 12, 2048), append(dims(1, 8, 74, 128), dims(1, 8, 74, 128)...)...), 4 * 12 * 2048 * 74},
		{"bucket: keys input, 3D", append(dims(20, 76, 2048), append(dims(20, 150, 1024), append(dims(20, 150, 1024), dims(20, 1, 76, 150)...)...)...),
			dims(20, 76, 2048), 4 * 20 * 76 * 2048 * 150},
		{"4D inputs", append(dims(2, 16, 5, 128), dims(2, 8, 9, 128)...), dims(2, 16, 5, 128), 4 * 2 * 16 * 5 * 128 * 9},
		{"no key shape", dims(1, 4, 8), dims(1, 4, 8), 0},
		{"no shapes", nil, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := attentionFLOPs(c.in, c.out); got != c.want {
				t.Errorf("attentionFLOPs = %g, want %g", got, c.want)
			}
		})
	}
}

// TestReadLayer0 reads layer 0 of one run of a real trace (the 0.6B test
// model's shared-prefix graph, 20 memories, 2 threads; events trimmed of
// their thread statistics) and checks the summary against its golden file
// and against sums done here by other means.
func TestReadLayer0(t *testing.T) {
	raw, err := os.ReadFile("testdata/layer0.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if s.Runs != 1 {
		t.Fatalf("runs = %d, want 1", s.Runs)
	}
	// Independent sums over the raw events.
	var events []struct {
		Cat, Name string
		Dur       float64
		Args      struct {
			OpName string `json:"op_name"`
		}
	}
	if err := json.Unmarshal(raw, &events); err != nil {
		t.Fatal(err)
	}
	var kernel, gemm float64
	gemms := 0
	for _, e := range events {
		if e.Cat == "Node" && strings.HasSuffix(e.Name, "_kernel_time") {
			kernel += e.Dur / 1e6
			if e.Args.OpName == "Gemm" {
				gemm += e.Dur / 1e6
				gemms++
			}
		}
	}
	if math.Abs(s.NodeSeconds-kernel) > 1e-9 {
		t.Errorf("kernel time %g s, events sum to %g", s.NodeSeconds, kernel)
	}
	g := s.Ops[0]
	if g.Type != "Gemm" || g.Nodes != float64(gemms) || math.Abs(g.Seconds-gemm) > 1e-9 {
		t.Errorf("longest op %+v, want Gemm x%d taking %g s", g, gemms, gemm)
	}
	// One layer's projections at 1014 rows: q (2048), k, v, o (1024 out
	// of 2048 in), gate and up (3072), down (1024 out of 3072 in).
	const rows = 1014
	wantGemm := 2.0 * rows * (1024*2048 + 2*1024*1024 + 2048*1024 + 2*1024*3072 + 3072*1024) / 1e9
	if math.Abs(g.GFLOP-wantGemm) > 1e-9 {
		t.Errorf("Gemm GFLOP per run %g, want %g", g.GFLOP, wantGemm)
	}
	var shares float64
	for i, o := range s.Ops {
		shares += o.Share
		if i > 0 && o.Seconds > s.Ops[i-1].Seconds {
			t.Errorf("ops not longest first at %d: %v after %v", i, o, s.Ops[i-1])
		}
	}
	if math.Abs(shares-1) > 1e-9 {
		t.Errorf("shares sum to %g", shares)
	}
	if s.MatrixShare <= g.Share || s.MatrixShare >= 1 || s.MatrixGFLOPs <= 0 {
		t.Errorf("matrix share %g (Gemm alone %g), %g GFLOP/s", s.MatrixShare, g.Share, s.MatrixGFLOPs)
	}
	golden(t, "layer0", s)
}

func golden(t *testing.T, name string, s Summary) {
	t.Helper()
	got, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	var a Summary
	if err := json.Unmarshal(want, &a); err != nil {
		t.Fatal(err)
	}
	if !sameSummary(a, s) {
		t.Errorf("summary differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

// sameSummary compares summaries with a relative tolerance on the floats.
func sameSummary(a, b Summary) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(x)) }
	if a.Runs != b.Runs || len(a.Ops) != len(b.Ops) || !near(a.RunSeconds, b.RunSeconds) || !near(a.NodeSeconds, b.NodeSeconds) ||
		!near(a.MatrixShare, b.MatrixShare) || !near(a.MatrixGFLOPs, b.MatrixGFLOPs) {
		return false
	}
	for i := range a.Ops {
		x, y := a.Ops[i], b.Ops[i]
		if x.Type != y.Type || !near(x.Nodes, y.Nodes) || !near(x.Seconds, y.Seconds) || !near(x.Share, y.Share) || !near(x.GFLOP, y.GFLOP) {
			return false
		}
	}
	return true
}

func TestReadPerRun(t *testing.T) {
	// Two runs: per-run figures are halves of the totals.
	trace := `[
{"cat":"Session","name":"model_run","dur":3000},
{"cat":"Session","name":"model_run","dur":1000},
{"cat":"Node","name":"mm_kernel_time","dur":1000,"args":{"op_name":"MatMul","input_type_shape":[{"float":[10,100]}],"output_type_shape":[{"float":[10,50]}]}},
{"cat":"Node","name":"mm_fence_before","dur":0,"args":{"op_name":"MatMul"}},
{"cat":"Node","name":"mm_kernel_time","dur":1000,"args":{"op_name":"MatMul","input_type_shape":[{"float":[10,100]}],"output_type_shape":[{"float":[10,50]}]}},
{"cat":"Node","name":"add_kernel_time","dur":2000,"args":{"op_name":"Add"}},
{"cat":"Node","name":"odd_kernel_time","dur":5,"args":{}},
{"cat":"Api","name":"something else","dur":7}
]`
	s, err := Read(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Runs: 2, RunSeconds: 0.002, NodeSeconds: 0.002, MatrixShare: 0.5, MatrixGFLOPs: 2 * 10 * 100 * 50 * 2 / 1e9 / 0.002,
		Ops: []Op{{Type: "Add", Nodes: 0.5, Seconds: 0.001, Share: 0.5}, {Type: "MatMul", Nodes: 1, Seconds: 0.001, Share: 0.5, GFLOP: 2 * 10 * 100 * 50 / 1e9}}}
	if !sameSummary(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if g := s.Ops[1].GFLOPs(); math.Abs(g-s.MatrixGFLOPs) > 1e-9 {
		t.Errorf("MatMul rate %g, matrix rate %g", g, s.MatrixGFLOPs)
	}
	if len(s.Top(1)) != 1 || len(s.Top(9)) != 2 {
		t.Errorf("Top: %d, %d", len(s.Top(1)), len(s.Top(9)))
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range []struct{ name, trace string }{
		{"empty", ""},
		{"not an array", `{"cat":"Session"}`},
		{"cut short", `[{"cat":"Session","name":"model_run","dur":3`},
		{"no runs", `[{"cat":"Node","name":"x_kernel_time","dur":1,"args":{"op_name":"Add"}}]`},
		{"wrong type", `[{"cat":"Node","name":"x_kernel_time","dur":"1"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Read(strings.NewReader(c.trace)); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := Read(strings.NewReader(`[]`)); !errors.Is(err, ErrNoRuns) {
		t.Errorf("empty trace: %v, want ErrNoRuns", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzRead: any input gives a summary or an error, never a panic, and a
// summary's shares are fractions.
func FuzzRead(f *testing.F) {
	raw, err := os.ReadFile("testdata/layer0.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`[{"cat":"Session","name":"model_run","dur":1},{"cat":"Node","name":"a_kernel_time","dur":1,"args":{"op_name":"Gemm","input_type_shape":[{"float":[2]}],"output_type_shape":[{"float":[2,2]}]}}]`))
	f.Add([]byte(`[{"cat":"Session","name":"model_run","dur":-5}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if s.Runs < 1 {
			t.Fatalf("summary with %d runs", s.Runs)
		}
		for _, o := range s.Ops {
			if o.Nodes <= 0 {
				t.Fatalf("op %+v with no nodes", o)
			}
		}
	})
}
