package hf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/rerankd/rerankd/internal/atomicfile"
	"github.com/rerankd/rerankd/model/arch"
)

// WriteSafetensors writes tensors in dtype (F32, BF16 or F16, rounded to nearest
// even) the way the reference implementation lays files out: tensors sorted
// by name, data contiguous in that order, "__metadata__" first in the
// header, and the header padded with spaces to a multiple of 8 bytes so the
// data section stays aligned.
func WriteSafetensors(w io.Writer, tensors map[string]*arch.Tensor, dtype DType, metadata map[string]string) error {
	if dtype != F32 && dtype != BF16 && dtype != F16 {
		return fmt.Errorf("write dtype %q: only F32, BF16 and F16 are supported", dtype)
	}
	names := make([]string, 0, len(tensors))
	for name, t := range tensors {
		if err := checkTensor(name, t); err != nil {
			return err
		}
		names = append(names, name)
	}
	slices.Sort(names)
	header, err := encodeHeader(names, tensors, dtype, metadata)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(header)))
	if _, err := bw.Write(lenBuf[:]); err != nil {
		return fmt.Errorf("writing safetensors: %w", err)
	}
	if _, err := bw.Write(header); err != nil {
		return fmt.Errorf("writing safetensors: %w", err)
	}
	for _, name := range names {
		if err := encodeFloats(bw, dtype, tensors[name].Data); err != nil {
			return fmt.Errorf("writing tensor %q: %w", name, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing safetensors: %w", err)
	}
	return nil
}

// SaveSafetensors writes a safetensors file atomically (atomicfile.Write:
// a temporary file, fsynced, renamed into place, the folder fsynced).
func SaveSafetensors(path string, tensors map[string]*arch.Tensor, dtype DType, metadata map[string]string) error {
	return atomicfile.Write(path, 0o644, "", func(w io.Writer) error {
		if err := WriteSafetensors(w, tensors, dtype, metadata); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
}

func checkTensor(name string, t *arch.Tensor) error {
	if t == nil {
		return fmt.Errorf("tensor %q is nil", name)
	}
	if name == metadataKey || name == "" {
		return fmt.Errorf("tensor name %q is reserved", name)
	}
	n := 1
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("tensor %q has negative dimension in shape %v", name, t.Shape)
		}
		n *= d
	}
	if n != len(t.Data) {
		return fmt.Errorf("tensor %q has %d values for shape %v (%d)", name, len(t.Data), t.Shape, n)
	}
	return nil
}

type headerEntry struct {
	DType       DType   `json:"dtype"`
	Shape       []int   `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

func encodeHeader(names []string, tensors map[string]*arch.Tensor, dtype DType, metadata map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(metadata) > 0 {
		m, err := json.Marshal(metadata) // keys sorted
		if err != nil {
			return nil, err
		}
		b.WriteString(`"` + metadataKey + `":`)
		b.Write(m)
	}
	var off int64
	for i, name := range names {
		t := tensors[name]
		end := off + int64(len(t.Data)*dtype.Size())
		shape := t.Shape
		if shape == nil {
			shape = []int{} // a scalar: "shape":[] rather than null
		}
		key, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(headerEntry{DType: dtype, Shape: shape, DataOffsets: []int64{off, end}})
		if err != nil {
			return nil, err
		}
		if i > 0 || len(metadata) > 0 {
			b.WriteByte(',')
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
		off = end
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes(), nil
}

func encodeFloats(w io.Writer, dtype DType, data []float32) error {
	var buf [4096]byte
	size := dtype.Size()
	per := len(buf) / size
	for i := 0; i < len(data); i += per {
		chunk := data[i:min(i+per, len(data))]
		for j, v := range chunk {
			switch dtype {
			case BF16:
				binary.LittleEndian.PutUint16(buf[2*j:], Float32ToBF16(v))
			case F16:
				binary.LittleEndian.PutUint16(buf[2*j:], Float32ToF16(v))
			default:
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(v))
			}
		}
		if _, err := w.Write(buf[:len(chunk)*size]); err != nil {
			return err
		}
	}
	return nil
}
