package calibrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckModelAndDegenerate: a file records the model whose scores it
// was fitted on and is refused for another; a fit that maps every score to
// one probability is reported as degenerate.
func TestCheckModelAndDegenerate(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "calibration-platt.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Degenerate(); err != nil {
		t.Fatalf("golden fit: %v", err)
	}
	if err := c.CheckModel("any"); err != nil {
		t.Fatalf("a file without a model is accepted (serve warns): %v", err)
	}
	c.Source.Model = "Qwen/Qwen3-Reranker-0.6B"
	if err := c.CheckModel("Qwen/Qwen3-Reranker-0.6B"); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckModel("BAAI/bge-reranker-base"); err == nil || !strings.Contains(err.Error(), `fitted on the scores of model "Qwen/Qwen3-Reranker-0.6B"`) {
		t.Fatalf("mismatch: %v", err)
	}
	c.Platt.Slope = 0
	if err := c.Validate(); err != nil {
		t.Fatalf("slope 0 is a valid shape: %v", err)
	}
	if err := c.Degenerate(); err == nil || !strings.Contains(err.Error(), "degenerate fit") {
		t.Fatalf("slope 0: %v", err)
	}
	iso := &Calibration{Isotonic: &Isotonic{X: []float64{0, 1}, Y: []float64{0.3, 0.3}}}
	if err := iso.Degenerate(); err == nil {
		t.Fatal("constant isotonic fit not reported")
	}
}
