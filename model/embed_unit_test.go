package model

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/internal/tokentest"
)

// TestPoolLast: the last masked-in position is read for left padding,
// right padding and no padding alike.
func TestPoolLast(t *testing.T) {
	// batch 3, seq 3, dim 2: value = 10*row + position (both components).
	var data []float32
	for r := range 3 {
		for p := range 3 {
			v := float32(10*r + p)
			data = append(data, v, -v)
		}
	}
	mask := []int64{
		1, 1, 0, // right-padded: last real position 1
		0, 1, 1, // left-padded: position 2
		1, 1, 1, // full: position 2
	}
	got, err := poolLast(data, []int64{3, 3, 2}, mask)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{1, -1}, {12, -12}, {22, -22}}
	if !slices.EqualFunc(got, want, slices.Equal[[]float32]) {
		t.Errorf("poolLast = %v, want %v", got, want)
	}
	got[0][0] = 99
	if data[2] == 99 {
		t.Error("poolLast returned a view of the output, not a copy")
	}
	for _, tc := range []struct {
		name  string
		data  []float32
		shape []int64
		mask  []int64
		want  string
	}{
		{"rank 2", data, []int64{3, 6}, mask, "want [batch, seq, hidden]"},
		{"short data", data[:4], []int64{3, 3, 2}, mask, "hold 4 values"},
		{"row without tokens", data, []int64{3, 3, 2}, []int64{1, 0, 0, 0, 0, 0, 1, 1, 1}, "row 1 has no real token"},
	} {
		if _, err := poolLast(tc.data, tc.shape, tc.mask); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDetectEmbeddingOutput(t *testing.T) {
	var f32, i64 ort.TensorElementDataType = ort.TensorElementDataTypeFloat, ort.TensorElementDataTypeInt64
	out := func(name string, dt ort.TensorElementDataType, dims ...int64) ort.InputOutputInfo {
		return ort.InputOutputInfo{Name: name, DataType: dt, Dimensions: dims}
	}
	for _, tc := range []struct {
		name     string
		outs     []ort.InputOutputInfo
		wantName string
		wantKind EmbeddingOutput
		wantDim  int
		wantErr  []string
	}{
		{"ours", []ort.InputOutputInfo{out("last_hidden_state", f32, -1, -1, 64)}, "last_hidden_state", EmbedOutputHidden, 64, nil},
		{"optimum with pooled, hidden preferred", []ort.InputOutputInfo{
			out("sentence_embedding", f32, -1, 1024), out("last_hidden_state", f32, -1, -1, 1024)},
			"last_hidden_state", EmbedOutputHidden, 1024, nil},
		{"dynamic hidden", []ort.InputOutputInfo{out("last_hidden_state", f32, -1, -1, -1)}, "last_hidden_state", EmbedOutputHidden, -1, nil},
		{"pooled only", []ort.InputOutputInfo{out("embeddings", f32, -1, 32)}, "embeddings", EmbedOutputPooled, 32, nil},
		{"reranker", []ort.InputOutputInfo{out("logits", f32, -1)}, "", 0, 0,
			[]string{"not an embedding model", "found logits"}},
		{"hidden of wrong rank", []ort.InputOutputInfo{out("last_hidden_state", f32, -1, 64)}, "", 0, 0,
			[]string{`output "last_hidden_state"`, "want float32 [batch, seq, hidden]"}},
		{"pooled of wrong type", []ort.InputOutputInfo{out("sentence_embedding", i64, -1, 64)}, "", 0, 0,
			[]string{`output "sentence_embedding"`, "want float32 [batch, hidden]", "not an embedding model"}},
		{"nothing", nil, "", 0, 0, []string{"not an embedding model"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, kind, dim, err := detectEmbeddingOutput(tc.outs)
			if (err != nil) != (len(tc.wantErr) > 0) {
				t.Fatalf("err = %v", err)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if name != tc.wantName || kind != tc.wantKind || dim != tc.wantDim {
				t.Errorf("got %q %v %d, want %q %v %d", name, kind, dim, tc.wantName, tc.wantKind, tc.wantDim)
			}
		})
	}
}

// Real post-processor shapes: Qwen3-Embedding's template, a Sequence
// wrapping it (Llama 3 style), a plain ByteLevel (Qwen3 base/reranker).
const (
	qwenEmbeddingTemplate = `{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A","type_id":0}},` +
		`{"SpecialToken":{"id":"<|endoftext|>","type_id":0}}],"pair":[],` +
		`"special_tokens":{"<|endoftext|>":{"id":"<|endoftext|>","ids":[151643],"tokens":["<|endoftext|>"]}}}`
	bosTemplate = `{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],` +
		`"special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}}`
)

func TestEmbedConfigValidate(t *testing.T) {
	if err := DefaultEmbedConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := EmbedConfig{MaxLength: 1, BatchTokens: 0, MaxBatch: 0, Dim: -1, MaxPadRatio: 0.5}
	err := bad.Validate()
	for _, w := range []string{"max length 1", "batch tokens 0", "max batch 0", "dim -1", "max pad ratio 0.5"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate() = %v, want it to mention %q", err, w)
		}
	}
	o := DefaultEmbedderOptions()
	o.Engine, o.Embed.MaxBatch = "gpu", 0
	err = o.Validate()
	for _, w := range []string{`engine "gpu"`, "max batch 0"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("options Validate() = %v, want it to mention %q", err, w)
		}
	}
	if err := DefaultEmbedderOptions().Validate(); err == nil || !strings.Contains(err.Error(), "ONNX Runtime library") {
		t.Errorf("onnx engine without a library: %v", err)
	}
}

// fakeEngine returns preset vectors, to test what the Embedder does with
// engine output.
type fakeEngine struct {
	dim  int
	out  func(seqs [][]int) [][]float32
	same bool
}

func (f *fakeEngine) Pooled(_ context.Context, seqs [][]int) ([][]float32, error) {
	return f.out(seqs), nil
}
func (f *fakeEngine) Dim() int                { return f.dim }
func (f *fakeEngine) SameLengthBatches() bool { return f.same }
func (f *fakeEngine) Close() error            { return nil }

func TestEmbedderEngineOutput(t *testing.T) {
	tok := tokentest.Qwen(t)
	constant := func(v ...float32) func([][]int) [][]float32 {
		return func(seqs [][]int) [][]float32 {
			out := make([][]float32, len(seqs))
			for i := range out {
				out[i] = slices.Clone(v)
			}
			return out
		}
	}
	// Dimension learned from a probe run when the engine cannot tell.
	e, err := NewEmbedder(tok, &fakeEngine{dim: -1, out: constant(3, 4)}, DefaultEmbedConfig())
	if err != nil || e.Dim() != 2 {
		t.Fatalf("NewEmbedder = %v dim, %v", e, err)
	}
	v, err := e.Embed(context.Background(), []string{"a", "bb"}, false)
	if err != nil || len(v) != 2 || v[1][0] != 0.6 || v[1][1] != 0.8 {
		t.Errorf("Embed = %v, %v", v, err)
	}
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name string
		eng  *fakeEngine
		want error
		msg  string
	}{
		{"wrong size", &fakeEngine{dim: 3, out: constant(1, 2)}, ErrDimension, "engine returned 2 values, the model has 3"},
		{"nan", &fakeEngine{dim: 2, out: constant(nan, 1)}, ErrBadVector, "norm NaN"},
		{"zero", &fakeEngine{dim: 2, out: constant(0, 0)}, ErrBadVector, "norm 0"},
		{"count", &fakeEngine{dim: 2, out: func([][]int) [][]float32 { return nil }}, nil, "engine returned 0 vectors for 2 sequences"},
	} {
		e, err := NewEmbedder(tok, tc.eng, DefaultEmbedConfig())
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Embed(context.Background(), []string{"a", "b"}, true)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %v mentioning %q", tc.name, err, tc.want, tc.msg)
		}
	}
	// A same-length engine gets batches of equal lengths only.
	var calls [][]int
	same := &fakeEngine{dim: 1, same: true, out: func(seqs [][]int) [][]float32 {
		lens := []int{}
		for _, s := range seqs {
			lens = append(lens, len(s))
		}
		calls = append(calls, lens)
		return constant(1)(seqs)
	}}
	e, err = NewEmbedder(tok, same, DefaultEmbedConfig())
	if err != nil {
		t.Fatal(err)
	}
	calls = nil
	if _, err := e.Embed(context.Background(), []string{"a", "b", "a b c d e"}, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if slices.Min(c) != slices.Max(c) {
			t.Errorf("mixed lengths %v in one call", c)
		}
	}
	// A padding engine gets rows of very different lengths in separate
	// calls under the default MaxPadRatio, and in one call without a limit.
	texts := []string{"a", "b", "a b c d e f g h i j"}
	for _, tc := range []struct {
		maxPad float64
		calls  int
	}{{1.25, 2}, {0, 1}} {
		pads := &fakeEngine{dim: 1, out: same.out}
		cfg := DefaultEmbedConfig()
		cfg.MaxPadRatio = tc.maxPad
		e, err := NewEmbedder(tok, pads, cfg)
		if err != nil {
			t.Fatal(err)
		}
		calls = nil
		if _, err := e.Embed(context.Background(), texts, false); err != nil {
			t.Fatal(err)
		}
		if len(calls) != tc.calls {
			t.Errorf("max pad ratio %v: calls %v, want %d", tc.maxPad, calls, tc.calls)
		}
	}
}

func TestEmbedTemplate(t *testing.T) {
	tok := tokentest.Qwen(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name       string
		pp         string
		begin, end []int
		err        string
	}{
		{"none: <|endoftext|>", `{"type":"ByteLevel"}`, nil, []int{151643}, ""},
		{"qwen3-embedding", qwenEmbeddingTemplate, nil, []int{151643}, ""},
		{"prefix only", strings.ReplaceAll(bosTemplate, "[1]", "[151644]"), []int{151644}, nil, ""},
		{"outside vocabulary", strings.ReplaceAll(bosTemplate, "[1]", "[999999]"), nil, nil, "id 999999 is outside"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		if err := os.WriteFile(p, []byte(`{"post_processor":`+tc.pp+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		begin, end, err := embedTemplate(tok, p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(begin, tc.begin) || !slices.Equal(end, tc.end) {
			t.Errorf("%s: %v %v %v, want %v %v", tc.name, begin, end, err, tc.begin, tc.end)
		}
	}
}
