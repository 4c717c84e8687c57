package onnx

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want []string // substrings, all reported at once
	}{
		{"defaults", func(*Options) {}, nil},
		{"bad head", func(o *Options) { o.Head = 9 }, []string{"unknown head"}},
		{"everything", func(o *Options) {
			o.YesID, o.NoID, o.Storage.ExternalThreshold, o.Storage.Alignment = -1, -1, -5, 3
		}, []string{"yes id", "no id", "both -1", "threshold", "alignment"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions(9693, 2152)
			tc.edit(&o)
			err := o.Validate()
			if (err != nil) != (len(tc.want) > 0) {
				t.Fatalf("Validate() = %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestParseHead(t *testing.T) {
	for h := HeadLogit; h <= HeadVocabAll; h++ {
		if got, err := ParseHead(h.String()); err != nil || got != h {
			t.Errorf("ParseHead(%q) = %v, %v", h, got, err)
		}
	}
	if _, err := ParseHead("nope"); err == nil {
		t.Error("ParseHead accepted an unknown head")
	}
}

func TestBuildRerankerErrors(t *testing.T) {
	good := randomWeights(t, smallConfig(true))
	broken := randomWeights(t, smallConfig(true))
	delete(broken.Tensors, arch.LayerTensor(1, arch.QNorm))
	for _, tc := range []struct {
		name string
		w    *arch.Weights
		opts Options
		want string
	}{
		{"nil weights", nil, NewOptions(testYes, testNo), "nil weights"},
		{"missing tensor", broken, NewOptions(testYes, testNo), "layers.1.self_attn.q_norm"},
		{"id outside vocab", good, NewOptions(9693, testNo), "outside vocabulary"},
		{"bad options", good, NewOptions(testYes, testYes), "both 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildReranker(tc.w, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestCheckFindsProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(g *onnxpb.GraphProto)
		want string
	}{
		{"dangling input", func(g *onnxpb.GraphProto) {
			g.Node[0].Input = append(g.Node[0].Input, "ghost")
		}, `input "ghost" is not defined`},
		{"out of order", func(g *onnxpb.GraphProto) {
			g.Node[0], g.Node[len(g.Node)-1] = g.Node[len(g.Node)-1], g.Node[0]
		}, "not defined before it"},
		{"defined twice", func(g *onnxpb.GraphProto) {
			g.Node[1].Output = g.Node[0].Output
		}, "defined twice"},
		{"output never produced", func(g *onnxpb.GraphProto) {
			g.Output[0].Name = proto.String("nothing")
		}, `graph output "nothing"`},
		{"short initializer", func(g *onnxpb.GraphProto) {
			g.Initializer[0].RawData = g.Initializer[0].RawData[:1]
		}, "bytes of data"},
		{"absolute external path", func(g *onnxpb.GraphProto) {
			g.Initializer[0].DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
			g.Initializer[0].ExternalData = []*onnxpb.StringStringEntryProto{
				{Key: proto.String("location"), Value: proto.String("/etc/model.data")}}
		}, "bad external location"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := buildSmall(t, smallConfig(true), HeadLogit)
			tc.edit(m.Proto.GetGraph())
			err := m.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
