package embed

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	for _, tc := range []struct {
		name string
		v    []float32
		want error
		msg  string
	}{
		{"ok", []float32{1, 2, 3}, nil, ""},
		{"tiny but fine", []float32{1e-20, 0, 0}, nil, ""},
		{"short", []float32{1, 2}, ErrDimension, "expected 3 values, got 2"},
		{"long", []float32{1, 2, 3, 4}, ErrDimension, "expected 3 values, got 4"},
		{"empty", []float32{}, ErrDimension, "expected 3 values, got 0"},
		{"nan", []float32{1, nan, 3}, ErrNonFinite, "value 1 is NaN"},
		{"inf", []float32{inf, 0, 0}, ErrNonFinite, "value 0 is -Inf"},
		{"zero", []float32{0, 0, 0}, ErrZeroVector, "norm 0"},
		{"denormal", []float32{1e-45, 0, 0}, ErrZeroVector, "norm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.v, 3)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Check(%v) = %v, want %v", tc.v, err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", err, tc.msg)
			}
			if errors.Is(tc.want, ErrZeroVector) && (errors.Is(err, ErrDimension) || errors.Is(err, ErrNonFinite)) {
				t.Error("a zero vector must be distinguishable from invalid ones")
			}
		})
	}
}

// TestCheckBound: the rule's zero bound is MinNorm, exclusive, and a
// dimension of 0 accepts nothing.
func TestCheckBound(t *testing.T) {
	if err := Check([]float32{1e-31, 0, 0, 0}, 4); !errors.Is(err, ErrZeroVector) {
		t.Errorf("norm 1e-31: %v, want ErrZeroVector", err)
	}
	if err := Check([]float32{2e-30, 0, 0, 0}, 4); err != nil {
		t.Errorf("norm 2e-30: %v, want nil", err)
	}
	if err := Check(nil, 0); !errors.Is(err, ErrDimension) {
		t.Errorf("dim 0: %v, want ErrDimension", err)
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		in   []float32
		want []float64
	}{
		{[]float32{3, 4}, []float64{0.6, 0.8}},
		{[]float32{0, -5, 0}, []float64{0, -1, 0}},
		{[]float32{1e-20, 1e-20}, []float64{math.Sqrt2 / 2, math.Sqrt2 / 2}},
		{[]float32{3e38, 3e38}, []float64{math.Sqrt2 / 2, math.Sqrt2 / 2}}, // squares exceed float32, not float64
	} {
		got, err := Normalize(tc.in)
		if err != nil {
			t.Fatalf("Normalize(%v): %v", tc.in, err)
		}
		var n float64
		for i, v := range got {
			if math.Abs(float64(v)-tc.want[i]) > 1e-7 {
				t.Errorf("Normalize(%v)[%d] = %v, want %v", tc.in, i, v, tc.want[i])
			}
			n += float64(v) * float64(v)
		}
		if math.Abs(n-1) > 1e-6 {
			t.Errorf("Normalize(%v) has squared norm %v", tc.in, n)
		}
	}
	in := []float32{2, 0}
	if _, err := Normalize(in); err != nil || in[0] != 2 {
		t.Errorf("Normalize modified its input: %v, %v", in, err)
	}
	if _, err := Normalize([]float32{0, 0}); !errors.Is(err, ErrZeroVector) {
		t.Errorf("zero: %v", err)
	}
	if _, err := Normalize(nil); !errors.Is(err, ErrZeroVector) {
		t.Errorf("empty: %v", err)
	}
	if v, err := Normalize([]float32{0, 2}); err != nil || v[1] != 1 {
		t.Errorf("Normalize: %v, %v", v, err)
	}
}

// FuzzNormalize: any vector is normalised to unit length or refused with
// one of the documented errors, never a panic or a NaN.
func FuzzNormalize(f *testing.F) {
	f.Add(float32(1), float32(2), float32(3))
	f.Add(float32(0), float32(0), float32(0))
	f.Add(float32(math.NaN()), float32(1), float32(1))
	f.Add(float32(3e38), float32(-3e38), float32(1e-45))
	f.Fuzz(func(t *testing.T, a, b, c float32) {
		v := []float32{a, b, c}
		got, err := Normalize(v)
		if err != nil {
			if !errors.Is(err, ErrZeroVector) && !errors.Is(err, ErrNonFinite) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		var n float64
		for _, x := range got {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("Normalize(%v) = %v", v, got)
			}
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Fatalf("Normalize(%v) has squared norm %v", v, n)
		}
	})
}
