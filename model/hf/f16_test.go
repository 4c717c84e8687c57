package hf

import (
	"math"
	"testing"
)

// TestFloat32ToF16: every half round-trips; a float32 halfway between two
// neighbouring halves rounds to the even one (normals and subnormals);
// past 65504 + half an ulp is infinity; NaN stays NaN.
func TestFloat32ToF16(t *testing.T) {
	for h := range 1 << 16 {
		f := F16ToFloat32(uint16(h))
		if f != f {
			if g := Float32ToF16(f); F16ToFloat32(g) == F16ToFloat32(g) {
				t.Fatalf("NaN %#04x became %#04x", h, g)
			}
			continue
		}
		if g := Float32ToF16(f); g != uint16(h) && !(f == 0 && g&0x7fff == 0) {
			t.Fatalf("half %#04x (%g) round-trips to %#04x", h, f, g)
		}
		// Halfway to the next half of larger magnitude (finite, same sign).
		next := uint16(h) + 1
		if h&0x7fff >= 0x7bff {
			continue
		}
		mid := float32((float64(f) + float64(F16ToFloat32(next))) / 2)
		want := uint16(h)
		if h&1 == 1 {
			want = next
		}
		if g := Float32ToF16(mid); g != want {
			t.Fatalf("midpoint of %#04x and %#04x (%g) rounds to %#04x, want %#04x", h, next, mid, g, want)
		}
	}
	for _, c := range []struct {
		f    float32
		want uint16
	}{{65504, 0x7bff}, {65519, 0x7bff}, {65520, 0x7c00}, {1e10, 0x7c00}, {-1e10, 0xfc00}, {float32(math.Inf(1)), 0x7c00},
		{5.96e-8, 0x0001}, {2.9e-8, 0x0000}, {1, 0x3c00}, {-2, 0xc000}} {
		if g := Float32ToF16(c.f); g != c.want {
			t.Errorf("Float32ToF16(%g) = %#04x, want %#04x", c.f, g, c.want)
		}
	}
}
