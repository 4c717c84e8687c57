package cli

import (
	"flag"
	"strings"
	"testing"
)

func TestHelpProblems(t *testing.T) {
	cases := []struct {
		name, usage string
		want        string // "" for none
	}{
		{"plain", "listen address host:port", ""},
		{"ratio", "0.95x the time per request float32", "measurement"},
		{"seconds range", "packing took most of a 4-11 s start", "measurement"},
		{"size", "a 0.6B model's 1.8 GB", "measurement"},
		{"approx ratio", "int8-block32 (~5x less error)", "measurement"},
		{"percent", "saves 40% of the time", "measurement"},
		{"back quote", "file from `eval calibrate`", "value name"},
		{"model name is no figure", "Qwen3-Reranker-0.6B dimensions", ""},
		{"units alone", "bytes, or with KiB/MiB/GiB/KB/MB/GB", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.String("f", "", c.usage)
			fs.Duration("d", 0, "a duration")
			var b strings.Builder
			fs.SetOutput(&b)
			fs.PrintDefaults()
			got := strings.Join(HelpProblems(b.String()), "; ")
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("HelpProblems(%q) = %q, want %q", b.String(), got, c.want)
			}
		})
	}
	// A default value is a setting, not a measurement.
	if p := HelpProblems("  -request-timeout duration\n    \ttime limit per request (default 30s)\n"); len(p) != 0 {
		t.Errorf("default flagged: %v", p)
	}
}
