package onnx

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

const testYes, testNo = 7, 3

// smallConfig is a Qwen3-shaped config small enough to build many times.
func smallConfig(tied bool) arch.Config {
	c := arch.Tiny()
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers = 50, 32, 2
	c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, c.IntermediateSize = 4, 2, 8, 48
	c.TieWordEmbeddings = tied
	return c
}

func randomWeights(t *testing.T, c arch.Config) *arch.Weights {
	t.Helper()
	w, err := arch.Random(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func buildSmall(t *testing.T, c arch.Config, head Head) (*arch.Weights, *Model) {
	t.Helper()
	w := randomWeights(t, c)
	o := NewOptions(testYes, testNo)
	o.Head = head
	m, err := BuildReranker(w, o)
	if err != nil {
		t.Fatal(err)
	}
	return w, m
}

func outputDims(vi *onnxpb.ValueInfoProto) []string {
	var d []string
	for _, dim := range vi.GetType().GetTensorType().GetShape().GetDim() {
		if p := dim.GetDimParam(); p != "" {
			d = append(d, p)
		} else {
			d = append(d, strconv.FormatInt(dim.GetDimValue(), 10))
		}
	}
	return d
}

func TestBuildReranker(t *testing.T) {
	for _, tc := range []struct {
		head Head
		tied bool
		dims []string
	}{
		{HeadLogit, true, []string{"batch"}},
		{HeadLogit, false, []string{"batch"}},
		{HeadYesNo, true, []string{"batch", "2"}},
		{HeadVocabLast, false, []string{"batch", "50"}},
		{HeadVocabAll, true, []string{"batch", "seq", "50"}},
		{HeadVocabAll, false, []string{"batch", "seq", "50"}},
	} {
		t.Run(tc.head.String()+map[bool]string{true: "/tied", false: "/untied"}[tc.tied], func(t *testing.T) {
			c := smallConfig(tc.tied)
			_, m := buildSmall(t, c, tc.head)
			if err := m.Check(); err != nil {
				t.Fatalf("Check: %v", err)
			}
			p := m.Proto
			if p.GetIrVersion() != IRVersion || p.GetOpsetImport()[0].GetVersion() != Opset || p.GetProducerName() != Producer {
				t.Errorf("versions: ir %d opset %v producer %q", p.GetIrVersion(), p.GetOpsetImport(), p.GetProducerName())
			}
			g := p.GetGraph()
			var ins []string
			for _, in := range g.GetInput() {
				ins = append(ins, in.GetName()+strings.Join(outputDims(in), ","))
			}
			if want := []string{"input_idsbatch,seq", "attention_maskbatch,seq"}; !slices.Equal(ins, want) {
				t.Errorf("inputs %v, want %v", ins, want)
			}
			if len(g.GetOutput()) != 1 || g.GetOutput()[0].GetName() != OutputLogits {
				t.Fatalf("outputs %v", g.GetOutput())
			}
			if got := outputDims(g.GetOutput()[0]); !slices.Equal(got, tc.dims) {
				t.Errorf("logits dims %v, want %v", got, tc.dims)
			}
			// Initializers named like arch tensors have arch's shapes.
			shapes := c.Shapes()
			seen := 0
			for _, init := range g.GetInitializer() {
				want, ok := shapes[init.GetName()]
				if !ok {
					continue
				}
				seen++
				if !slices.Equal(init.GetDims(), dims64(want)) {
					t.Errorf("%s dims %v, want %v", init.GetName(), init.GetDims(), want)
				}
			}
			wantSeen := len(shapes)
			if tc.head == HeadLogit && !tc.tied {
				wantSeen-- // the difference vector replaces lm_head
			}
			if seen != wantSeen {
				t.Errorf("%d arch tensors in the graph, want %d", seen, wantSeen)
			}
			if h, _ := m.Meta(MetaHead); h != tc.head.String() {
				t.Errorf("metadata head %q", h)
			}
			if y, _ := m.Meta(MetaYesID); y != "7" {
				t.Errorf("metadata yes id %q", y)
			}
			if cfg, _ := m.Meta(MetaConfig); !strings.Contains(cfg, `"hidden_size":32`) {
				t.Errorf("metadata config %s", cfg)
			}
			// Protobuf round trip.
			raw, err := proto.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			back := &onnxpb.ModelProto{}
			if err := proto.Unmarshal(raw, back); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(back, p) {
				t.Error("model changed in a marshal round trip")
			}
		})
	}
}
