package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

func TestBuildSharedPrefix(t *testing.T) {
	w := randomWeights(t, smallConfig(true))
	m, err := BuildSharedPrefix(w, NewOptions(testYes, testNo))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	var ins []string
	for _, in := range m.Proto.GetGraph().GetInput() {
		ins = append(ins, in.GetName())
	}
	if got := strings.Join(ins, ","); got != "prefix_ids,input_ids,attention_mask,past_key,past_value" {
		t.Errorf("inputs %s", got)
	}
	var outs []string
	for _, out := range m.Proto.GetGraph().GetOutput() {
		outs = append(outs, out.GetName())
	}
	if got := strings.Join(outs, ","); got != "logits,present_key,present_value" {
		t.Errorf("outputs %s", got)
	}
	if v, _ := m.Meta(MetaVariant); v != VariantSharedPrefix {
		t.Errorf("variant metadata %q", v)
	}
	// The reference engine can read its weights like the plain graph's.
	if _, head, err := m.Weights(); err != nil || len(head) != w.Config.HiddenSize {
		t.Errorf("Weights: %v (head %d)", err, len(head))
	}
	bad := NewOptions(testYes, testNo)
	bad.Head = HeadVocabAll
	if _, err := BuildSharedPrefix(w, bad); err == nil || !strings.Contains(err.Error(), "supports head") {
		t.Errorf("vocab head: %v", err)
	}
	if _, err := BuildSharedPrefix(nil, NewOptions(testYes, testNo)); err == nil {
		t.Error("nil weights accepted")
	}
}

// TestFuseAttentionGraph: with FuseAttention every layer but the last
// runs its attention as Attention nodes, one for the prefix and one per
// bucket, and the model imports the opset that defines it; without it the
// graph stays at Opset with no Attention node.
func TestFuseAttentionGraph(t *testing.T) {
	w := randomWeights(t, smallConfig(true))
	for _, c := range []struct {
		fusion  Fusion
		buckets int
		want    int
		opset   int64
	}{{0, 1, 0, Opset}, {FuseAttention, 1, 2, AttentionOpset}, {FuseAttention, 3, 4, AttentionOpset}, {AllFusions, 2, 3, AttentionOpset}} {
		o := NewOptions(testYes, testNo)
		o.Fusion, o.AttentionBuckets = c.fusion, c.buckets
		m, err := BuildSharedPrefix(w, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, node := range m.Proto.GetGraph().GetNode() {
			if node.GetOpType() == "Attention" && node.GetDomain() == "" {
				n++
			}
		}
		layers := w.Config.NumHiddenLayers
		if want := c.want * (layers - 1); n != want {
			t.Errorf("%v, %d buckets: %d Attention nodes, want %d (%d per layer but the last)", c.fusion, c.buckets, n, want, c.want)
		}
		if got := m.Proto.GetOpsetImport()[0].GetVersion(); got != c.opset {
			t.Errorf("%v: opset %d, want %d", c.fusion, got, c.opset)
		}
	}
}

// TestSaveWithSharesData: variants saved with SaveWith refer to the same
// data file at the same offsets, which is no larger than model.onnx's own.
func TestSaveWithSharesData(t *testing.T) {
	w := randomWeights(t, smallConfig(true))
	opts := NewOptions(testYes, testNo)
	opts.Storage.ForceExternal = true
	m, err := BuildReranker(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := BuildSharedPrefix(w, opts)
	if err != nil {
		t.Fatal(err)
	}
	alone, shared := t.TempDir(), t.TempDir()
	if err := m.Save(alone); err != nil {
		t.Fatal(err)
	}
	if err := m.SaveWith(shared, map[string]*Model{SharedPrefixFile: v}); err != nil {
		t.Fatal(err)
	}
	files := listDir(t, shared)
	if len(files) != 3 || files[DataFile] != listDir(t, alone)[DataFile] {
		t.Fatalf("files %v; data file alone %d bytes", files, listDir(t, alone)[DataFile])
	}
	checkExternal(t, shared, files[DataFile], m)
	refs := func(file string) map[string]extRef {
		raw, err := os.ReadFile(filepath.Join(shared, file))
		if err != nil {
			t.Fatal(err)
		}
		p := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(raw, p); err != nil {
			t.Fatal(err)
		}
		out := map[string]extRef{}
		for _, init := range p.GetGraph().GetInitializer() {
			if init.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
				r, err := externalRef(init)
				if err != nil {
					t.Fatal(err)
				}
				out[init.GetName()] = r
			}
		}
		return out
	}
	base, variant := refs(ModelFile), refs(SharedPrefixFile)
	if len(variant) == 0 {
		t.Fatal("variant has no external tensors")
	}
	for name, r := range variant {
		if base[name] != r {
			t.Errorf("%s: variant %+v, model.onnx %+v", name, r, base[name])
		}
	}

	for _, name := range []string{ModelFile, DataFile, "../x.onnx", ""} {
		if err := m.SaveWith(t.TempDir(), map[string]*Model{name: v}); err == nil {
			t.Errorf("variant name %q accepted", name)
		}
	}
	// Same name, different data: refused (the file would serve one of them).
	w2 := randomWeights(t, smallConfig(true))
	w2.Tensors[arch.LayerTensor(0, arch.QProj)].Data[0] += 1 // large enough to go external
	other, err := BuildSharedPrefix(w2, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SaveWith(t.TempDir(), map[string]*Model{SharedPrefixFile: other}); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("conflicting initializers: %v", err)
	}
}
