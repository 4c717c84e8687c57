package hf

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

// rawFile assembles a safetensors file from a header string and data bytes.
func rawFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

func le32(vals ...float32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// TestWriteGolden pins the byte layout to the reference implementation's:
// metadata first, tensors by name, compact JSON, space padding to 8 bytes.
func TestWriteGolden(t *testing.T) {
	tensors := map[string]*arch.Tensor{
		"b": {Shape: []int{2}, Data: []float32{1, -2}},
		"a": {Shape: []int{}, Data: []float32{0.5}},
	}
	var got bytes.Buffer
	if err := WriteSafetensors(&got, tensors, F32, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	header := `{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},` +
		`"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`
	header += strings.Repeat(" ", (8-len(header)%8)%8)
	want := rawFile(header, le32(0.5, 1, -2))
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("got\n%q\nwant\n%q", got.Bytes(), want)
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	tensors := map[string]*arch.Tensor{
		"matrix": {Shape: []int{3, 4}, Data: []float32{1, -1, 0.1, 1e-3, 3.14159, -2.71828, 65504, 1e20, -1e-20, 0, 7, 1.0 / 3}},
		"scalar": {Shape: []int{}, Data: []float32{42.5}},
		"empty":  {Shape: []int{0, 5}, Data: []float32{}},
		"vector": {Shape: []int{5}, Data: []float32{float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, -0.5, 2}},
	}
	tests := []struct {
		dtype DType
		rel   float64 // relative tolerance
	}{
		{F32, 0},
		{BF16, 1.0 / 256}, // 8 significant bits, round to nearest: half an ulp
	}
	for _, tt := range tests {
		t.Run(string(tt.dtype), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.safetensors")
			if err := SaveSafetensors(path, tensors, tt.dtype, map[string]string{"k": "v"}); err != nil {
				t.Fatal(err)
			}
			f, err := OpenSafetensors(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Metadata["k"] != "v" || f.DataOffset%8 != 0 {
				t.Errorf("metadata %v, data offset %d", f.Metadata, f.DataOffset)
			}
			if got := strings.Join(f.Names(), ","); got != "empty,matrix,scalar,vector" {
				t.Errorf("names %s", got)
			}
			for name, want := range tensors {
				got, err := f.Float32(name)
				if err != nil {
					t.Fatal(err)
				}
				assertTensor(t, name, got, want, tt.rel)
			}
		})
	}
}

// assertTensor compares shapes exactly and values within a relative
// tolerance (bf16 flushes nothing but loses mantissa bits).
func assertTensor(t *testing.T, name string, got, want *arch.Tensor, rel float64) {
	t.Helper()
	if len(got.Shape) != len(want.Shape) || len(got.Data) != len(want.Data) {
		t.Fatalf("%s: shape %v (%d values), want %v (%d)", name, got.Shape, len(got.Data), want.Shape, len(want.Data))
	}
	for i := range got.Shape {
		if got.Shape[i] != want.Shape[i] {
			t.Fatalf("%s: shape %v, want %v", name, got.Shape, want.Shape)
		}
	}
	for i, w := range want.Data {
		g := got.Data[i]
		if g == w {
			continue
		}
		diff := math.Abs(float64(g) - float64(w))
		// 1e-38: bf16 keeps float32's exponent range, so tiny values lose
		// relative precision only as float32 subnormals do.
		if !(diff <= rel*math.Abs(float64(w))+1e-38) {
			t.Fatalf("%s[%d] = %v, want %v (tolerance %v relative)", name, i, g, w, rel)
		}
	}
}

// TestReadHalfTypes reads F16, BF16 and F64 data written by hand.
func TestReadHalfTypes(t *testing.T) {
	var data []byte
	data = binary.LittleEndian.AppendUint64(data, math.Float64bits(0.1))   // f64 [0,8)
	data = binary.LittleEndian.AppendUint64(data, math.Float64bits(-1e40)) // [8,16): overflows to -inf
	data = binary.LittleEndian.AppendUint16(data, 0x3c00)                  // f16 1 [16,18)
	data = binary.LittleEndian.AppendUint16(data, 0x0001)                  // f16 2^-24
	data = binary.LittleEndian.AppendUint16(data, 0x3f80)                  // bf16 1 [20,22)
	data = binary.LittleEndian.AppendUint16(data, 0xc049)                  // bf16 -3.140625
	header := `{"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},` +
		`"h":{"dtype":"F16","shape":[2],"data_offsets":[16,20]},` +
		`"b":{"dtype":"BF16","shape":[1,2],"data_offsets":[20,24]}}`
	path := filepath.Join(t.TempDir(), "h.safetensors")
	if err := os.WriteFile(path, rawFile(header, data), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string][]float32{
		"d": {0.1, float32(math.Inf(-1))},
		"h": {1, float32(math.Ldexp(1, -24))},
		"b": {1, -3.140625},
	}
	for name, w := range want {
		got, err := f.Float32(name)
		if err != nil {
			t.Fatal(err)
		}
		assertTensor(t, name, got, &arch.Tensor{Shape: f.Tensors[name].Shape, Data: w}, 0)
	}
}

// headerCases are malformed files and the error each must produce; the
// fuzz test starts from them too.
var headerCases = []struct {
	name string
	file []byte
	want string
}{
	{"too short", []byte{1, 2, 3}, "shorter than"},
	{"huge length", binary.LittleEndian.AppendUint64(nil, 1<<62), "exceeds the 100000000-byte limit"},
	{"length past end", rawFile(`{}`, nil)[:9], "exceeds the 1 bytes"},
	{"empty header", rawFile(``, nil), "does not start with '{'"},
	{"not an object", rawFile(`[1]`, nil), "does not start with '{'"},
	{"bad json", rawFile(`{"a":`, nil), "header"},
	{"trailing garbage", rawFile(`{}x`, nil), "unexpected bytes"},
	{"unknown dtype", rawFile(`{"a":{"dtype":"F12","shape":[1],"data_offsets":[0,4]}}`, le32(0)), "unknown dtype"},
	{"missing dtype", rawFile(`{"a":{"shape":[1],"data_offsets":[0,4]}}`, le32(0)), "missing dtype"},
	{"missing shape", rawFile(`{"a":{"dtype":"F32","data_offsets":[0,4]}}`, le32(0)), "missing shape"},
	{"one offset", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}`, le32(0)), "data_offsets"},
	{"negative dim", rawFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, le32(0)), "bad dimension"},
	{"reversed offsets", rawFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}`, le32(0)), "bad data_offsets"},
	{"size mismatch", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, le32(0)), "needs 8"},
	{"overflow", rawFile(`{"a":{"dtype":"F64","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,8]}}`, le32(0, 0)), "overflows"},
	{"past end", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, le32(0)), "past the 4-byte data section"},
	{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, le32(0, 0)), "overlaps"},
	{"hole", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, le32(0, 0)), "hole of 4 bytes"},
	{"trailing data", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, le32(0, 0)), "4 trailing bytes"},
	{"duplicate", rawFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}`, nil), "duplicate"},
	{"bad metadata", rawFile(`{"__metadata__":{"n":1}}`, nil), "__metadata__"},
	{"null tensor", rawFile(`{"a":null}`, nil), "missing dtype"},
}

func TestReadHeaderErrors(t *testing.T) {
	for _, tt := range headerCases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadHeader(bytes.NewReader(tt.file), int64(len(tt.file)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestReadHeaderValid(t *testing.T) {
	tests := []struct {
		name, header string
		data         []byte
		tensors      int
	}{
		{"empty", `{}`, nil, 0},
		{"padded", `{}      `, nil, 0},
		{"metadata only", `{"__metadata__":{"format":"pt"}}`, nil, 0},
		{"zero-size tensors share an offset", `{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"I8","shape":[0,3],"data_offsets":[0,0]}}`, nil, 2},
		{"unsorted offsets", `{"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}`, le32(1, 2), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := rawFile(tt.header, tt.data)
			h, err := ReadHeader(bytes.NewReader(file), int64(len(file)))
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Tensors) != tt.tensors {
				t.Errorf("%d tensors, want %d", len(h.Tensors), tt.tensors)
			}
		})
	}
}

func TestFloat32Errors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i.safetensors")
	file := rawFile(`{"ids":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}`, le32(0))
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, want := range map[string]string{"ids": "does not convert", "nope": `no tensor "nope"`} {
		if _, err := f.Float32(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Float32(%q) err = %v, want %q", name, err, want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name    string
		tensors map[string]*arch.Tensor
		dtype   DType
		want    string
	}{
		{"dtype", map[string]*arch.Tensor{}, I64, "only F32, BF16 and F16"},
		{"nil", map[string]*arch.Tensor{"a": nil}, F32, "nil"},
		{"reserved", map[string]*arch.Tensor{metadataKey: {Data: []float32{1}}}, F32, "reserved"},
		{"size", map[string]*arch.Tensor{"a": {Shape: []int{2}, Data: []float32{1}}}, F32, "1 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteSafetensors(&bytes.Buffer{}, tt.tensors, tt.dtype, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
