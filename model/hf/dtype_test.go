package hf

import (
	"math"
	"testing"
)

func TestF16ToFloat32(t *testing.T) {
	tests := []struct {
		bits uint16
		want float64
	}{
		{0x0000, 0},
		{0x8000, math.Copysign(0, -1)},
		{0x3c00, 1},
		{0x3c01, 1 + math.Ldexp(1, -10)},
		{0xc000, -2},
		{0x3555, 0.333251953125},
		{0x7bff, 65504},                  // largest finite
		{0x0400, math.Ldexp(1, -14)},     // smallest normal
		{0x03ff, math.Ldexp(1023, -24)},  // largest subnormal
		{0x0200, math.Ldexp(1, -15)},     // subnormal, top bit
		{0x0001, math.Ldexp(1, -24)},     // smallest subnormal
		{0x8001, -math.Ldexp(1, -24)},    // negative subnormal
		{0x0155, math.Ldexp(0x155, -24)}, // subnormal, several bits
		{0x7c00, math.Inf(1)},
		{0xfc00, math.Inf(-1)},
	}
	for _, tt := range tests {
		got := F16ToFloat32(tt.bits)
		if float64(got) != tt.want || math.Signbit(float64(got)) != math.Signbit(tt.want) {
			t.Errorf("F16ToFloat32(%#04x) = %v, want %v", tt.bits, got, tt.want)
		}
	}
	if nan := F16ToFloat32(0x7e00); !math.IsNaN(float64(nan)) {
		t.Errorf("F16ToFloat32(0x7e00) = %v, want NaN", nan)
	}
}

// TestF16Exhaustive checks all 65536 halves against the IEEE definition.
func TestF16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		sign, exp, mant := h>>15, int(h>>10)&0x1f, int(h&0x3ff)
		var want float64
		switch exp {
		case 0:
			want = math.Ldexp(float64(mant), -24)
		case 0x1f:
			want = math.Inf(1)
			if mant != 0 {
				want = math.NaN()
			}
		default:
			want = math.Ldexp(float64(mant|0x400), exp-25)
		}
		if sign == 1 {
			want = -want
		}
		got := float64(F16ToFloat32(h))
		if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && (got != want || math.Signbit(got) != math.Signbit(want)) {
			t.Fatalf("F16ToFloat32(%#04x) = %v, want %v", h, got, want)
		}
	}
}

func TestBF16(t *testing.T) {
	tests := []struct {
		name string
		in   uint32 // float32 bits
		want uint16
	}{
		{"one", 0x3f800000, 0x3f80},
		{"exact", 0xc0490000, 0xc049},
		{"below half rounds down", 0x3f807fff, 0x3f80},
		{"above half rounds up", 0x3f808001, 0x3f81},
		{"tie to even (down)", 0x3f808000, 0x3f80},
		{"tie to even (up)", 0x3f818000, 0x3f82},
		{"carry into exponent", 0x3fffffff, 0x4000},
		{"max float overflows to inf", 0x7f7fffff, 0x7f80},
		{"inf", 0x7f800000, 0x7f80},
		{"-inf", 0xff800000, 0xff80},
		{"negative zero", 0x80000000, 0x8000},
		{"subnormal", 0x00010000, 0x0001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Float32ToBF16(math.Float32frombits(tt.in)); got != tt.want {
				t.Errorf("Float32ToBF16(%#08x) = %#04x, want %#04x", tt.in, got, tt.want)
			}
		})
	}
	// NaN with only low mantissa bits set must not truncate to infinity.
	if got := BF16ToFloat32(Float32ToBF16(math.Float32frombits(0x7f800001))); !math.IsNaN(float64(got)) {
		t.Errorf("NaN round trip = %v", got)
	}
	// Widening is exact and inverts rounding for every bf16 value.
	for i := range 1 << 16 {
		f := BF16ToFloat32(uint16(i))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := Float32ToBF16(f); back != uint16(i) {
			t.Fatalf("bf16 %#04x -> %v -> %#04x", i, f, back)
		}
	}
}
