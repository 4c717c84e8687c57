package onnx

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

func listDir(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]int64{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = info.Size()
	}
	return files
}

func TestSaveLayout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		storage  func(*Storage)
		external bool
	}{
		{"default inline", func(*Storage) {}, false},
		{"forced external", func(s *Storage) { s.ForceExternal = true }, true},
		{"over threshold", func(s *Storage) { s.ExternalThreshold = 10_000 }, true},
		{"64-byte alignment", func(s *Storage) { s.ForceExternal, s.Alignment = true, 64 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m := buildSmall(t, smallConfig(true), HeadLogit)
			tc.storage(&m.Storage)
			dir := t.TempDir()
			// A stale data file must disappear after an inline save.
			if err := os.WriteFile(filepath.Join(dir, DataFile), []byte("stale"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := m.Save(dir); err != nil {
				t.Fatal(err)
			}
			files := listDir(t, dir)
			if _, ok := files[DataFile]; ok != tc.external || len(files) != map[bool]int{true: 2, false: 1}[tc.external] {
				t.Fatalf("files %v, external %v", files, tc.external)
			}
			if tc.external {
				checkExternal(t, dir, files[DataFile], m)
			}
			back, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(back.Proto, m.Proto) {
				t.Error("loaded model differs from the saved one")
			}
			// WeightBytes counts the same data from the graph file alone.
			if n, err := WeightBytes(filepath.Join(dir, ModelFile)); err != nil || n != m.InitializerBytes() || n == 0 {
				t.Errorf("WeightBytes = %d, %v; initializers hold %d", n, err, m.InitializerBytes())
			}
			// Saving again over the existing files works and is stable.
			if err := m.Save(dir); err != nil {
				t.Fatal(err)
			}
			if again := listDir(t, dir); len(again) != len(files) || again[ModelFile] != files[ModelFile] {
				t.Errorf("second save: %v, first %v", again, files)
			}
		})
	}
}

// checkExternal reads model.onnx without Load and checks every external
// reference: relative location, aligned, in bounds, non-overlapping,
// length matching dims, bytes equal to the in-memory tensor.
func checkExternal(t *testing.T, dir string, dataSize int64, m *Model) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	p := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(raw, p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, DataFile))
	if err != nil {
		t.Fatal(err)
	}
	orig := map[string][]byte{}
	for _, init := range m.Proto.GetGraph().GetInitializer() {
		orig[init.GetName()] = init.GetRawData()
	}
	var end int64
	nExt := 0
	for _, init := range p.GetGraph().GetInitializer() {
		if init.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
			if len(init.GetRawData()) >= minExternalBytes {
				t.Errorf("%s: %d bytes left inline", init.GetName(), len(init.GetRawData()))
			}
			continue
		}
		nExt++
		if len(init.GetRawData()) != 0 {
			t.Errorf("%s: external and inline data", init.GetName())
		}
		ref, err := externalRef(init)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(4)
		for _, d := range init.GetDims() {
			want *= d
		}
		switch {
		case ref.location != DataFile:
			t.Errorf("%s: location %q", init.GetName(), ref.location)
		case ref.offset%m.Storage.Alignment != 0:
			t.Errorf("%s: offset %d not aligned to %d", init.GetName(), ref.offset, m.Storage.Alignment)
		case ref.offset < end:
			t.Errorf("%s: offset %d overlaps the previous tensor ending at %d", init.GetName(), ref.offset, end)
		case ref.length != want:
			t.Errorf("%s: length %d, want %d", init.GetName(), ref.length, want)
		case ref.offset+ref.length > dataSize:
			t.Errorf("%s: [%d, %d) beyond the %d-byte file", init.GetName(), ref.offset, ref.offset+ref.length, dataSize)
		case string(data[ref.offset:ref.offset+ref.length]) != string(orig[init.GetName()]):
			t.Errorf("%s: data file bytes differ from the tensor", init.GetName())
		}
		end = ref.offset + ref.length
	}
	if nExt == 0 || end != dataSize {
		t.Errorf("%d external tensors ending at %d, file has %d bytes", nExt, end, dataSize)
	}
}

func TestSaveAtomic(t *testing.T) {
	t.Run("failed write leaves nothing and keeps the old file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, ModelFile)
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		err := writeAtomic(path, func(w io.Writer) error {
			if _, err := w.Write(make([]byte, 3<<20)); err != nil { // past the buffer: really on disk
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err %v, want boom", err)
		}
		if files := listDir(t, dir); len(files) != 1 || files[ModelFile] != 3 {
			t.Errorf("files after failed write: %v", files)
		}
	})
	t.Run("invalid model is not written", func(t *testing.T) {
		_, m := buildSmall(t, smallConfig(true), HeadLogit)
		m.Storage.ForceExternal = true
		dir := t.TempDir()
		if err := m.Save(dir); err != nil {
			t.Fatal(err)
		}
		before := listDir(t, dir)
		g := m.Proto.GetGraph()
		g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String("Relu"), Input: []string{"nowhere"}, Output: []string{"x"}})
		if err := m.Save(dir); err == nil {
			t.Fatal("saved a model with a dangling input")
		}
		if after := listDir(t, dir); len(after) != len(before) || after[ModelFile] != before[ModelFile] {
			t.Errorf("files changed by a failed save: %v -> %v", before, after)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		m := BuildMatMulChain(1, 4)
		if err := m.Save(filepath.Join(t.TempDir(), "absent")); err == nil {
			t.Fatal("saved into a missing directory")
		}
	})
}

func TestBuildMatMulChain(t *testing.T) {
	for _, tc := range []struct{ n, dim, inits int }{{0, 3, 0}, {1, 8, 1}, {4, 16, 4}} {
		t.Run(strconv.Itoa(tc.n)+"x"+strconv.Itoa(tc.dim), func(t *testing.T) {
			m := BuildMatMulChain(tc.n, tc.dim)
			if err := m.Check(); err != nil {
				t.Fatal(err)
			}
			g := m.Proto.GetGraph()
			if len(g.GetInitializer()) != tc.inits || m.InitializerBytes() != int64(4*tc.n*tc.dim*tc.dim) {
				t.Errorf("%d initializers, %d bytes", len(g.GetInitializer()), m.InitializerBytes())
			}
			if got := outputDims(g.GetOutput()[0]); got[0] != "batch" || got[1] != strconv.Itoa(tc.dim) {
				t.Errorf("output dims %v", got)
			}
			if !proto.Equal(BuildMatMulChain(tc.n, tc.dim).Proto, m.Proto) {
				t.Error("not deterministic")
			}
		})
	}
}
