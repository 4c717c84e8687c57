package arch

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Tensor is a dense float32 array in row-major order.
type Tensor struct {
	Shape []int
	Data  []float32
}

// Weights are a model's tensors by Hugging Face name.
type Weights struct {
	Config  Config
	Tensors map[string]*Tensor
}

// Tensor names (Hugging Face Qwen3ForCausalLM).
const (
	EmbedTokens = "model.embed_tokens.weight"
	FinalNorm   = "model.norm.weight"
	LMHead      = "lm_head.weight"
)

// Per-layer tensor names, relative to "model.layers.N.".
const (
	InputNorm = "input_layernorm.weight"
	QProj     = "self_attn.q_proj.weight"
	KProj     = "self_attn.k_proj.weight"
	VProj     = "self_attn.v_proj.weight"
	OProj     = "self_attn.o_proj.weight"
	QNorm     = "self_attn.q_norm.weight"
	KNorm     = "self_attn.k_norm.weight"
	PostNorm  = "post_attention_layernorm.weight"
	GateProj  = "mlp.gate_proj.weight"
	UpProj    = "mlp.up_proj.weight"
	DownProj  = "mlp.down_proj.weight"

	// Qwen2 only: the q/k/v projections' biases, [out] each, added after
	// the product (Qwen2Attention: nn.Linear(..., bias=True) for q, k and
	// v; o_proj has none). Qwen2 has no q_norm/k_norm.
	QBias = "self_attn.q_proj.bias"
	KBias = "self_attn.k_proj.bias"
	VBias = "self_attn.v_proj.bias"
)

// ProjBias returns the bias tensor suffix of a projection weight suffix
// (QProj -> QBias), or "" for a projection that never has one.
func ProjBias(proj string) string {
	switch proj {
	case QProj:
		return QBias
	case KProj:
		return KBias
	case VProj:
		return VBias
	}
	return ""
}

// LayerTensor returns the full name of a per-layer tensor.
func LayerTensor(layer int, name string) string {
	return fmt.Sprintf("model.layers.%d.%s", layer, name)
}

// Shapes returns the expected shape of every tensor of c, by name.
func (c Config) Shapes() map[string][]int {
	h, hd, in := c.HiddenSize, c.HeadDim, c.IntermediateSize
	q, kv := c.NumAttentionHeads*hd, c.NumKeyValueHeads*hd
	s := map[string][]int{
		EmbedTokens: {c.VocabSize, h},
		FinalNorm:   {h},
	}
	switch {
	case c.backbone:
	case c.SeqCls():
		s[ScoreWeight] = []int{c.NumLabels(), h}
	case !c.TieWordEmbeddings:
		s[LMHead] = []int{c.VocabSize, h}
	}
	for l := range c.NumHiddenLayers {
		layer := map[string][]int{
			InputNorm: {h}, PostNorm: {h},
			QProj: {q, h}, KProj: {kv, h}, VProj: {kv, h}, OProj: {h, q},
			GateProj: {in, h}, UpProj: {in, h}, DownProj: {h, in},
		}
		if c.QKNorm() {
			layer[QNorm], layer[KNorm] = []int{hd}, []int{hd}
		}
		if c.QKVBias() {
			layer[QBias], layer[KBias], layer[VBias] = []int{q}, []int{kv}, []int{kv}
		}
		for name, shape := range layer {
			s[LayerTensor(l, name)] = shape
		}
	}
	return s
}

// Check reports every missing or mis-shaped tensor at once. Extra tensors
// (rotary caches, a redundant lm_head) are allowed.
func (w *Weights) Check() error { return w.check(w.Config) }

// CheckBackbone is Check without the output head: it reports the tensors
// a forward pass to the final hidden state reads, so weights whose head is
// kept elsewhere (a reranker graph stores only the folded yes-no row
// difference, not an untied lm_head) pass. A head present is not checked.
func (w *Weights) CheckBackbone() error { return w.check(w.Config.Backbone()) }

func (w *Weights) check(c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return checkTensors(w.Tensors, c.Shapes())
}

// checkTensors reports every tensor of shapes that tensors lacks or holds
// with another shape or value count; tensors beyond shapes are allowed.
func checkTensors(tensors map[string]*Tensor, shapes map[string][]int) error {
	var errs []error
	for name, want := range shapes {
		t, ok := tensors[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("missing tensor %s", name))
		case !sameShape(t.Shape, want):
			errs = append(errs, fmt.Errorf("tensor %s has shape %v, want %v", name, t.Shape, want))
		case len(t.Data) != product(want):
			errs = append(errs, fmt.Errorf("tensor %s has %d values, want %d", name, len(t.Data), product(want)))
		}
	}
	return errors.Join(errs...)
}

// Head returns the output head matrix: lm_head, or embed_tokens when tied.
func (w *Weights) Head() *Tensor {
	if w.Config.TieWordEmbeddings {
		return w.Tensors[EmbedTokens]
	}
	return w.Tensors[LMHead]
}

// HeadDiff returns row yes minus row no of the output head. A reranker's
// logit is dot(final hidden state, HeadDiff): softmax over (yes, no) equals
// sigmoid(yes - no), so the full-vocabulary projection is never needed.
func (w *Weights) HeadDiff(yesID, noID int) ([]float32, error) {
	head := w.Head()
	if head == nil {
		return nil, errors.New("no output head (lm_head.weight or tied embed_tokens)")
	}
	rows, h := head.Shape[0], head.Shape[1]
	if yesID < 0 || yesID >= rows || noID < 0 || noID >= rows {
		return nil, fmt.Errorf("yes/no ids %d/%d outside the head's %d rows", yesID, noID, rows)
	}
	d := make([]float32, h)
	for i := range d {
		d[i] = head.Data[yesID*h+i] - head.Data[noID*h+i]
	}
	return d, nil
}

// Random returns seeded random weights for c: the same (c, seed) always
// gives the same weights. Matrices are N(0, 1/sqrt(in)) so activations keep
// their scale through the layers and scores spread over (0, 1) instead of
// saturating; norm gains are 1 + N(0, 0.1) and biases (Qwen2's q/k/v)
// N(0, 0.5), large enough that a graph that dropped one would be caught.
func Random(c Config, seed uint64) (*Weights, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	shapes := c.Shapes()
	names := sortedNames(shapes)
	w := &Weights{Config: c, Tensors: make(map[string]*Tensor, len(shapes))}
	for _, name := range names {
		w.Tensors[name] = &Tensor{Shape: shapes[name], Data: make([]float32, product(shapes[name]))}
	}
	// Each tensor gets its own stream (seed, index) so filling in parallel
	// stays deterministic.
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fillRandom(name, w.Tensors[name], seed, uint64(i))
		}()
	}
	wg.Wait()
	return w, nil
}

func fillRandom(name string, t *Tensor, seed, stream uint64) {
	rng := rand.New(rand.NewPCG(seed, stream))
	if strings.HasSuffix(name, ".bias") {
		for i := range t.Data {
			t.Data[i] = float32(0.5 * rng.NormFloat64())
		}
		return
	}
	if len(t.Shape) == 1 { // a norm gain
		for i := range t.Data {
			t.Data[i] = float32(1 + 0.1*rng.NormFloat64())
		}
		return
	}
	std := 1 / math.Sqrt(float64(t.Shape[1]))
	for i := range t.Data {
		t.Data[i] = float32(std * rng.NormFloat64())
	}
}

func sortedNames(m map[string][]int) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	// Sorted so stream numbers are stable across runs (map order is random).
	slices.Sort(names)
	return names
}

func sameShape(a, b []int) bool { return slices.Equal(a, b) }

func product(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}
