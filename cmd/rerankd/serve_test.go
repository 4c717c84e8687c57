package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServeFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"serve", "--max-documents", "0", "--queue-size", "-1", "--request-timeout", "0s"}, nil,
			[]string{"max documents", "queue", "request timeout"}},
		{[]string{"serve"}, map[string]string{"RERANKD_MAX_DOCUMENTS": "lots"}, []string{"RERANKD_MAX_DOCUMENTS"}},
		{[]string{"serve", "--api-key", "short"}, nil, []string{"API key 1"}},
		{[]string{"serve", "--log-level", "loud"}, nil, []string{"log-level"}},
		{[]string{"serve", "--model", "no such dir!", "--addr", "127.0.0.1:0"}, nil, []string{"neither a folder nor a repo id"}},
		{[]string{"serve", "--key-scopes", "/no/such/file.json"}, nil, []string{"--key-scopes", "no such file"}},
		{[]string{"serve", "--calibration", "/no/such/calib.json", "--store", "none"}, nil, []string{"--calibration"}},
		{[]string{"serve", "--calibration", writeTemp(t, `{"version":1,"method":"magic"}`), "--store", "none"}, nil, []string{"--calibration"}},
		{[]string{"serve", "--key-scopes", writeTemp(t, `["not", "an object"]`)}, nil, []string{"JSON object"}},
		{[]string{"serve", "--key-scopes", writeTemp(t, `{"long-enough-key": ["bad/ns"]}`)}, nil, []string{"bad/ns"}},
		{[]string{"serve", "--vector-dim", "-3", "--store", filepath.Join(t.TempDir(), "m.db"), "--addr", "127.0.0.1:0"}, nil, []string{"--vector-dim"}},
		{[]string{"serve", "--backfill-batch", "-1", "--store", filepath.Join(t.TempDir(), "m.db"), "--addr", "127.0.0.1:0"}, nil, []string{"--backfill-batch"}},
		{[]string{"serve", "--store", filepath.Join(t.TempDir(), "m.db"), "--addr", "127.0.0.1:0"}, map[string]string{"RERANKD_SNAPSHOT_IDLE": "-1s"}, []string{"--snapshot-idle"}},
		{[]string{"serve", "--vector-dim", "4", "--snapshot-dir", writeTemp(t, "a file"), "--store", filepath.Join(t.TempDir(), "m.db"), "--addr", "127.0.0.1:0"}, nil,
			[]string{"SnapshotDir", "not a directory"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			code, _, errs := runCLI(t, c.args...)
			if code == 0 {
				t.Errorf("exit 0")
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
		})
	}
}

func TestApplyEnv(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := defineServeFlags(fs)
	t.Setenv("RERANKD_MAX_DOCUMENTS", "7")
	t.Setenv("RERANKD_ADDR", "0.0.0.0:9999")
	if err := fs.Parse([]string{"--addr", "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if err := applyEnv(fs); err != nil {
		t.Fatal(err)
	}
	if f.server.MaxDocuments != 7 || f.addr != "127.0.0.1:1" {
		t.Errorf("env should fill unset flags only: max docs %d addr %s", f.server.MaxDocuments, f.addr)
	}
}
