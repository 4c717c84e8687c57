package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/rerankd/rerankd/model/arch"
)

// MaxHeaderSize bounds the JSON header, as the reference implementation
// does (100 MB): a hostile length field cannot make the reader allocate more.
const MaxHeaderSize = 100_000_000

// metadataKey is the reserved header entry holding free-form string metadata.
const metadataKey = "__metadata__"

// TensorInfo describes one tensor of a safetensors file.
type TensorInfo struct {
	Name  string
	DType DType
	Shape []int
	// Begin and End are byte offsets into the data section (after the header).
	Begin, End int64
}

// Len returns the number of elements (1 for a scalar).
func (t TensorInfo) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Header is a parsed and validated safetensors header.
type Header struct {
	Tensors  map[string]TensorInfo
	Metadata map[string]string
	// DataOffset is the file offset of the data section: 8 + header length.
	DataOffset int64
}

// Names returns the tensor names, sorted.
func (h *Header) Names() []string {
	names := make([]string, 0, len(h.Tensors))
	for n := range h.Tensors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ReadHeader reads and validates the header of a safetensors file of the
// given total size. It checks everything the reference implementation
// checks: a bounded header length, a JSON object starting with '{', known
// dtypes, sizes that match shapes, and data offsets that tile the data
// section exactly (no overlaps, holes or trailing bytes).
func ReadHeader(r io.ReaderAt, size int64) (*Header, error) {
	if size < 8 {
		return nil, fmt.Errorf("file is %d bytes, shorter than the 8-byte header length", size)
	}
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("reading header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > MaxHeaderSize {
		return nil, fmt.Errorf("header length %d exceeds the %d-byte limit", n, MaxHeaderSize)
	}
	if n > uint64(size-8) {
		return nil, fmt.Errorf("header length %d exceeds the %d bytes after the length field", n, size-8)
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, 8); err != nil && n > 0 {
		return nil, fmt.Errorf("reading %d-byte header: %w", n, err)
	}
	h, err := parseHeaderJSON(buf)
	if err != nil {
		return nil, err
	}
	h.DataOffset = 8 + int64(n)
	if err := h.checkOffsets(size - h.DataOffset); err != nil {
		return nil, err
	}
	return h, nil
}

type rawTensor struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

func parseHeaderJSON(buf []byte) (*Header, error) {
	if len(buf) == 0 || buf[0] != '{' {
		return nil, errors.New("header does not start with '{'")
	}
	dec := json.NewDecoder(bytes.NewReader(buf))
	if _, err := dec.Token(); err != nil { // the opening '{'
		return nil, fmt.Errorf("header: %w", err)
	}
	h := &Header{Tensors: map[string]TensorInfo{}}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("header: %w", err)
		}
		name, _ := tok.(string) // object keys are always strings
		if seen[name] {
			return nil, fmt.Errorf("header: duplicate entry %q", name)
		}
		seen[name] = true
		if name == metadataKey {
			if err := dec.Decode(&h.Metadata); err != nil {
				return nil, fmt.Errorf("header %s (want string values): %w", metadataKey, err)
			}
			continue
		}
		var raw rawTensor
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("header: tensor %q: %w", name, err)
		}
		info, err := raw.info(name)
		if err != nil {
			return nil, fmt.Errorf("header: tensor %q: %w", name, err)
		}
		h.Tensors[name] = info
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, fmt.Errorf("header: %w", err)
	}
	// The reference writer pads the header with spaces to 8 bytes.
	if rest := buf[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return nil, fmt.Errorf("header: %d unexpected bytes after the JSON object", len(rest))
	}
	return h, nil
}

func (raw rawTensor) info(name string) (TensorInfo, error) {
	switch {
	case raw.DType == nil:
		return TensorInfo{}, errors.New("missing dtype")
	case raw.Shape == nil:
		return TensorInfo{}, errors.New("missing shape")
	case raw.DataOffsets == nil || len(*raw.DataOffsets) != 2:
		return TensorInfo{}, errors.New("data_offsets must be [begin, end]")
	}
	t := TensorInfo{Name: name, DType: DType(*raw.DType), Begin: (*raw.DataOffsets)[0], End: (*raw.DataOffsets)[1]}
	size := int64(t.DType.Size())
	if size == 0 {
		return TensorInfo{}, fmt.Errorf("unknown dtype %q", *raw.DType)
	}
	if t.Begin < 0 || t.End < t.Begin {
		return TensorInfo{}, fmt.Errorf("bad data_offsets [%d, %d]", t.Begin, t.End)
	}
	// Multiply with an overflow guard: only the byte count is trusted, and it
	// must match the offsets, which ReadHeader bounds by the file size.
	nbytes := size
	t.Shape = make([]int, len(*raw.Shape))
	for i, d := range *raw.Shape {
		if d < 0 || d > math.MaxInt32 {
			return TensorInfo{}, fmt.Errorf("bad dimension %d in shape %v", d, *raw.Shape)
		}
		if d != 0 && nbytes > math.MaxInt64/d {
			return TensorInfo{}, fmt.Errorf("shape %v overflows", *raw.Shape)
		}
		nbytes *= d
		t.Shape[i] = int(d)
	}
	if got := t.End - t.Begin; got != nbytes {
		return TensorInfo{}, fmt.Errorf("data_offsets span %d bytes, but shape %v of %s needs %d", got, t.Shape, t.DType, nbytes)
	}
	return t, nil
}

// checkOffsets requires the tensors to tile [0, dataLen) exactly, as the
// format demands (no holes, so files cannot hide other content).
func (h *Header) checkOffsets(dataLen int64) error {
	infos := make([]TensorInfo, 0, len(h.Tensors))
	for _, t := range h.Tensors {
		infos = append(infos, t)
	}
	slices.SortFunc(infos, func(a, b TensorInfo) int {
		if a.Begin != b.Begin {
			return cmpInt64(a.Begin, b.Begin)
		}
		return cmpInt64(a.End, b.End)
	})
	var end int64
	prev := "start of data"
	for _, t := range infos {
		switch {
		case t.Begin < end:
			return fmt.Errorf("tensor %q [%d, %d] overlaps %s", t.Name, t.Begin, t.End, prev)
		case t.Begin > end:
			return fmt.Errorf("hole of %d bytes before tensor %q", t.Begin-end, t.Name)
		case t.End > dataLen:
			return fmt.Errorf("tensor %q ends at %d, past the %d-byte data section", t.Name, t.End, dataLen)
		}
		end, prev = t.End, fmt.Sprintf("tensor %q", t.Name)
	}
	if end != dataLen {
		return fmt.Errorf("%d trailing bytes after the last tensor", dataLen-end)
	}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// File is an open safetensors file. Its methods are safe for concurrent use.
type File struct {
	Path string
	*Header
	f *os.File
}

// OpenSafetensors opens path and validates its header; data is read on demand.
func OpenSafetensors(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close() // read-only: nothing to lose
		return nil, err
	}
	h, err := ReadHeader(f, st.Size())
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{Path: path, Header: h, f: f}, nil
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// readChunk is how many bytes Float32 converts at a time, so a large bf16
// tensor never needs a second full-size buffer.
const readChunk = 1 << 20

// Float32 reads tensor name and converts it to float32 (NaN and
// infinities included: the checkpoint loaders refuse them, finiteWeights).
func (f *File) Float32(name string) (*arch.Tensor, error) {
	info, ok := f.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("%s: no tensor %q", f.Path, name)
	}
	if !info.DType.Float() {
		return nil, fmt.Errorf("%s: tensor %q has dtype %s, which does not convert to float32", f.Path, name, info.DType)
	}
	size := info.DType.Size()
	out := make([]float32, info.Len())
	buf := make([]byte, min(readChunk, len(out)*size))
	per := max(len(buf)/size, 1)
	for i := 0; i < len(out); i += per {
		n := min(per, len(out)-i)
		off := f.DataOffset + info.Begin + int64(i*size)
		if _, err := f.f.ReadAt(buf[:n*size], off); err != nil {
			return nil, fmt.Errorf("%s: reading tensor %q: %w", f.Path, name, err)
		}
		if err := decodeFloats(info.DType, buf[:n*size], out[i:i+n]); err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", f.Path, name, err)
		}
	}
	return &arch.Tensor{Shape: slices.Clone(info.Shape), Data: out}, nil
}

// finiteWeights is Float32 for a model's weights: a NaN or an infinity
// (an F64 value beyond float32's range too) is an error naming the file,
// the tensor and the first such value's index. No trained model holds
// one, and a graph built from it would score every input NaN.
func (f *File) finiteWeights(name string) (*arch.Tensor, error) {
	t, err := f.Float32(name)
	if err != nil {
		return nil, err
	}
	if i := nonFinite(t.Data); i >= 0 {
		return nil, fmt.Errorf("%s: tensor %q holds %v at index %d: the weights are damaged (no trained model holds NaN or infinity)", f.Path, name, t.Data[i], i)
	}
	return t, nil
}

// nonFinite returns the index of the first NaN or infinity in v, or -1.
func nonFinite(v []float32) int {
	for i, x := range v {
		if x-x != 0 { // NaN - NaN and Inf - Inf are NaN; finite x - x is 0
			return i
		}
	}
	return -1
}
