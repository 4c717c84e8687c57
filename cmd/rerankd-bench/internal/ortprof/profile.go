package ortprof

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// MatrixOps are the operator types whose FLOPs Summary counts: ONNX's
// products and ONNX Runtime's fused and quantised forms of them, and
// ONNX's Attention (its two products: the same work as the MatMuls of an
// unfused attention, which the other forms count).
var MatrixOps = []string{"Gemm", "MatMul", "FusedMatMul", "MatMulInteger", "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "QGemm", "Attention"}

// Op is one operator type's share of a profile, per run.
type Op struct {
	Type    string  `json:"op"`
	Nodes   float64 `json:"nodes_per_run"` // kernel executions per run
	Seconds float64 `json:"s_per_run"`
	Share   float64 `json:"share"`                   // of all kernel time
	GFLOP   float64 `json:"gflop_per_run,omitempty"` // matrix products only
}

// GFLOPs is the rate o ran at (0 for operators without a FLOP count).
func (o Op) GFLOPs() float64 {
	if o.Seconds == 0 {
		return 0
	}
	return o.GFLOP / o.Seconds
}

// Summary is where a profiled session's time went.
type Summary struct {
	Runs        int     `json:"runs"`
	RunSeconds  float64 `json:"run_s"`    // mean Run duration
	NodeSeconds float64 `json:"kernel_s"` // kernel time per run; the rest of a run is ORT's own work between nodes
	// MatrixShare is the matrix products' part of the kernel time and
	// MatrixGFLOPs their FLOPs per second of their own time: a graph's
	// overall efficiency against a matrix peak is at most about
	// MatrixShare x MatrixGFLOPs / peak.
	MatrixShare  float64 `json:"matrix_share"`
	MatrixGFLOPs float64 `json:"matrix_gflops"`
	Ops          []Op    `json:"ops"` // by time, longest first
}

// Top returns the n operator types that took longest.
func (s Summary) Top(n int) []Op { return s.Ops[:min(n, len(s.Ops))] }

type event struct {
	Cat  string  `json:"cat"`
	Name string  `json:"name"`
	Dur  float64 `json:"dur"` // microseconds
	Args struct {
		OpName string             `json:"op_name"`
		In     []map[string][]int `json:"input_type_shape"`
		Out    []map[string][]int `json:"output_type_shape"`
	} `json:"args"`
}

// ErrNoRuns reports a trace without a model_run event: a session that was
// profiled but never run, or a file cut short.
var ErrNoRuns = errors.New("trace has no model_run event")

// Read summarises the trace in r.
func Read(r io.Reader) (Summary, error) {
	var events []event
	if err := json.NewDecoder(r).Decode(&events); err != nil {
		return Summary{}, fmt.Errorf("ONNX Runtime trace: %w", err)
	}
	var s Summary
	byType := map[string]*Op{}
	var matrixSeconds, matrixGFLOP float64
	for _, e := range events {
		switch {
		case e.Cat == "Session" && e.Name == "model_run":
			s.Runs++
			s.RunSeconds += e.Dur / 1e6
		case e.Cat == "Node" && strings.HasSuffix(e.Name, "_kernel_time") && e.Args.OpName != "":
			o := byType[e.Args.OpName]
			if o == nil {
				o = &Op{Type: e.Args.OpName}
				byType[o.Type] = o
			}
			o.Nodes++
			o.Seconds += e.Dur / 1e6
			s.NodeSeconds += e.Dur / 1e6
			if slices.Contains(MatrixOps, o.Type) {
				count := flops
				if o.Type == "Attention" {
					count = attentionFLOPs
				}
				g := count(e.Args.In, e.Args.Out) / 1e9
				o.GFLOP += g
				matrixSeconds += e.Dur / 1e6
				matrixGFLOP += g
			}
		}
	}
	if s.Runs == 0 {
		return Summary{}, ErrNoRuns
	}
	n := float64(s.Runs)
	for _, o := range byType {
		if s.NodeSeconds > 0 {
			o.Share = o.Seconds / s.NodeSeconds
		}
		o.Nodes, o.Seconds, o.GFLOP = o.Nodes/n, o.Seconds/n, o.GFLOP/n
		s.Ops = append(s.Ops, *o)
	}
	slices.SortFunc(s.Ops, func(a, b Op) int { return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), strings.Compare(a.Type, b.Type)) })
	if s.NodeSeconds > 0 {
		s.MatrixShare = matrixSeconds / s.NodeSeconds
	}
	if matrixSeconds > 0 {
		s.MatrixGFLOPs = matrixGFLOP / matrixSeconds
	}
	s.RunSeconds /= n
	s.NodeSeconds /= n
	return s, nil
}

// ReadFile summarises the trace at path.
func ReadFile(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close() //nolint:errcheck // read only
	s, err := Read(f)
	if err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// flops is a product's 2·K per output element, K read from the first input
// against the output: A [.., M, K] (or [.., K, M] transposed) times B gives
// [.., M, N]. A shape it cannot read counts 0.
func flops(in, out []map[string][]int) float64 {
	a, c := shape(in), shape(out)
	if len(a) < 2 || len(c) < 2 {
		return 0
	}
	k := a[len(a)-1]
	if a[len(a)-2] != c[len(c)-2] { // transposed A: [.., K, M]
		k = a[len(a)-2]
	}
	elems := 1.0
	for _, d := range c {
		elems *= float64(d)
	}
	return 2 * elems * float64(k)
}

// shape is the first tensor's dimensions ([{"float": [2, 3]}] -> [2 3]).
func shape(ts []map[string][]int) []int {
	if len(ts) == 0 {
		return nil
	}
	for _, dims := range ts[0] {
		return dims
	}
	return nil
}

// attentionFLOPs is an Attention node's q·kᵀ and p·v, 2·T·(query
// elements) each, with T the keys per query: the present keys' length
// [B, kv_heads, T, head] when the node has past and present outputs, else
// the key input's (3D [B, T, D], 4D [B, heads, T, head]).
func attentionFLOPs(in, out []map[string][]int) float64 {
	q, k := shape(in), []int(nil)
	if len(in) > 1 {
		k = shape(in[1:])
	}
	t := 0
	switch {
	case len(out) > 1 && len(shape(out[1:])) == 4:
		t = shape(out[1:])[2]
	case len(k) == 3:
		t = k[1]
	case len(k) == 4:
		t = k[2]
	}
	if len(q) < 3 || t == 0 {
		return 0
	}
	elems := 1.0
	for _, d := range q {
		elems *= float64(d)
	}
	return 4 * elems * float64(t)
}
