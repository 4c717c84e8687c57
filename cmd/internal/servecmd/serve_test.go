package servecmd

import (
	"flag"
	"io"
	"testing"
)

// TestBatchTokensGiven: a token budget the user gives, by flag or by its
// environment variable, turns off the encoder's own bound on a call's
// attention scores; serve's default keeps it.
func TestBatchTokensGiven(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		env       string // RERANKD_BATCH_TOKENS ("" unset)
		wantBound bool
		wantBT    int
	}{
		{"default", nil, "", true, 8192},
		{"flag", []string{"--batch-tokens", "8192"}, "", false, 8192},
		{"environment", nil, "2048", false, 2048},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("RERANKD_BATCH_TOKENS", tc.env)
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			f := DefineFlags(fs)
			if _, err := Parse(fs, f, tc.args, io.Discard); err != nil {
				t.Fatal(err)
			}
			if got := f.Cfg.Tuning.EncoderCallBound; got != tc.wantBound || f.Cfg.Scheduler.BatchTokens != tc.wantBT {
				t.Errorf("encoder call bound %v, batch tokens %d; want %v, %d", got, f.Cfg.Scheduler.BatchTokens, tc.wantBound, tc.wantBT)
			}
		})
	}
}
