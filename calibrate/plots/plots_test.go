package plots

import (
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func toy() Data {
	rng := rand.New(rand.NewPCG(1, 1))
	d := Data{Title: "toy", Bins: 10, Threshold: 0.4, Rule: "maxf1", ScoresAreProbabilities: true}
	for range 500 {
		s := rng.Float64()
		d.Scores = append(d.Scores, s)
		d.Probs = append(d.Probs, s*s)
		d.Labels = append(d.Labels, rng.Float64() < s*s)
	}
	return d
}

func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteAll(toy(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(Files) {
		t.Fatalf("wrote %v", paths)
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		_ = f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Errorf("%s: %v, want a readable size", p, b)
		}
	}
}

func TestBadData(t *testing.T) {
	d := toy()
	d.Labels = d.Labels[:3]
	if _, err := WriteAll(d, t.TempDir()); err == nil {
		t.Error("mismatched lengths: no error")
	}
	// Real (non-probability) scores with one distinct value still plot.
	d = toy()
	d.ScoresAreProbabilities = false
	for i := range d.Scores {
		d.Scores[i] = 7
	}
	if _, err := WriteAll(d, t.TempDir()); err != nil {
		t.Error(err)
	}
	if err := Reliability(toy(), filepath.Join(t.TempDir(), "missing", "r.png")); err == nil {
		t.Error("unwritable path: no error")
	}
}
