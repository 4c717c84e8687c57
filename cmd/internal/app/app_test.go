package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/cli"
	"github.com/rerankd/rerankd/model"
	"github.com/rerankd/rerankd/model/onnx"
)

func TestResolvePrepack(t *testing.T) {
	for _, c := range []struct {
		v       string
		q       onnx.Quant
		cache   bool
		want    bool
		wantErr string
	}{
		{"auto", onnx.QuantNone, false, false, ""},
		{"auto", onnx.QuantInt8, false, true, ""},
		{"auto", onnx.QuantNone, true, true, ""},
		{"true", onnx.QuantNone, false, true, ""},
		{"false", onnx.QuantInt8, false, false, ""},
		{"false", onnx.QuantNone, true, false, "--session-cache"},
		{"maybe", onnx.QuantNone, false, false, "want auto, true or false"},
	} {
		got, err := ResolvePrepack(c.v, c.q, c.cache)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s %v cache %v: err %v, want %q", c.v, c.q, c.cache, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s %v cache %v: %v, %v; want %v", c.v, c.q, c.cache, got, err, c.want)
		}
	}
	// Validate refuses a bad value before anything is loaded.
	c := DefaultConfig()
	c.Model.Path, c.Tuning.Prepack = t.TempDir(), "sometimes"
	if err := c.Validate(); !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "--prepack") {
		t.Errorf("prepack sometimes: %v", err)
	}
}

// TestValidateReportsEveryProblem: Validate names every refused setting
// at once, each by its flag, as a usage error.
func TestValidateReportsEveryProblem(t *testing.T) {
	c := DefaultConfig()
	c.Model.Quant, c.Model.PrefixCacheMB, c.Model.MaxLength = "int4", -1, 0
	c.Scheduler.Workers = 0
	c.Server.MaxDocuments = -1
	c.MCPNamespace = "a/b"
	c.Memory.Store, c.Memory.Analyzer, c.Memory.IndexMemory = "mysql://x@h/db", "trigram", "lots"
	err := c.Validate()
	if !errors.Is(err, cli.ErrUsage) {
		t.Fatalf("Validate: %v, want a usage error", err)
	}
	for _, want := range []string{"--quant", "--prefix-cache-mb -1", "--max-length 0", "workers", "max documents", "--namespace", "--store", "--analyzer", "--index-memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate's error lacks %q: %v", want, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestLimitsFromScheduler: /info's limits and the scorer's plan both come
// from the scheduler configuration.
func TestLimitsFromScheduler(t *testing.T) {
	c := DefaultConfig()
	c.Scheduler.QueueSize, c.Scheduler.BatchTokens, c.Scheduler.MaxBatch, c.Scheduler.MaxPadRatio = 7, 300, 5, 1.5
	c.Model.MaxLength = 512
	if l := c.Limits(); l.QueueSize != 7 || l.BatchTokens != 300 || l.MaxBatch != 5 {
		t.Errorf("Limits %+v", l)
	}
	o := model.DefaultOptions()
	c.scorerPlan(&o)
	if o.Scorer.BatchTokens != 512 || o.Scorer.MaxBatch != 5 || o.Scorer.MaxPadRatio != 1.5 || o.Scorer.Prompt.MaxLength != 512 {
		t.Errorf("scorer plan %+v", o.Scorer)
	}
}
