package hf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is a safetensors element type as spelled in the header ("BF16", ...).
type DType string

// The dtypes of the safetensors format. Only the floating types convert to
// float32; the others are recognised so that a header using them is valid.
const (
	F64    DType = "F64"
	F32    DType = "F32"
	F16    DType = "F16"
	BF16   DType = "BF16"
	F8E4M3 DType = "F8_E4M3"
	F8E5M2 DType = "F8_E5M2"
	I64    DType = "I64"
	I32    DType = "I32"
	I16    DType = "I16"
	I8     DType = "I8"
	U64    DType = "U64"
	U32    DType = "U32"
	U16    DType = "U16"
	U8     DType = "U8"
	Bool   DType = "BOOL"
)

var dtypeSizes = map[DType]int{
	F64: 8, F32: 4, F16: 2, BF16: 2, F8E4M3: 1, F8E5M2: 1,
	I64: 8, I32: 4, I16: 2, I8: 1, U64: 8, U32: 4, U16: 2, U8: 1, Bool: 1,
}

// Size returns the bytes per element, or 0 for an unknown dtype.
func (d DType) Size() int { return dtypeSizes[d] }

// Float reports whether values of d convert to float32 (F64, F32, F16, BF16).
func (d DType) Float() bool {
	switch d {
	case F64, F32, F16, BF16:
		return true
	}
	return false
}

// decodeFloats converts len(dst) little-endian elements of type d from src
// (which holds exactly len(dst)*d.Size() bytes) into dst.
func decodeFloats(d DType, src []byte, dst []float32) error {
	switch d {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = BF16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = F16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case F64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])))
		}
	default:
		return fmt.Errorf("dtype %s does not convert to float32", d)
	}
	return nil
}

// BF16ToFloat32 widens a bfloat16 exactly: bfloat16 is the upper half of a float32.
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float32ToBF16 rounds f to the nearest bfloat16, ties to even, as PyTorch
// does. Values beyond the largest bfloat16 round to infinity; NaNs stay NaN.
func Float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f { // NaN: truncate, but keep a mantissa bit so it stays NaN
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// F16ToFloat32 widens an IEEE 754 half exactly, including subnormals,
// infinities and NaN payloads.
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise into float32's wider exponent range
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// Float32ToF16 rounds f to the nearest IEEE 754 half, ties to even, as
// PyTorch's .half() does: values beyond 65504 round to infinity, tiny ones
// to subnormals or zero; NaNs stay NaN.
func Float32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	fexp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if fexp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	exp := fexp - 127 + 15
	if exp >= 0x1f {
		return sign | 0x7c00
	}
	if exp <= 0 { // a half subnormal (in units of 2^-24), or zero
		if exp < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint(14 - exp)
		h := m >> shift
		rem, half := m&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(sign) | uint32(exp)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is right, up to infinity
	}
	return uint16(h)
}
