package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/cmd/internal/servecmd"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/serve"
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
		{[]string{"serve", "--max-embed-inputs", "0", "--served-model-name", "a, a", "--embed-queue-size", "0"}, nil,
			[]string{"max embedding inputs 0", `served model name "a" given twice`, "embedding queue size 0"}},
		{[]string{"serve", "--embed-model", "/no/such/folder", "--store", "none", "--addr", "127.0.0.1:0"}, nil, []string{"--embed-model"}},
		{[]string{"serve", "--store", "none"}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			[]string{"tracing", "http/json"}},
		{[]string{"serve", "--store", "none"}, map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, []string{"OTEL_TRACES_EXPORTER", "OTLP only"}},
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
	f := servecmd.DefineFlags(fs)
	t.Setenv("RERANKD_MAX_DOCUMENTS", "7")
	t.Setenv("RERANKD_ADDR", "0.0.0.0:9999")
	if err := fs.Parse([]string{"--addr", "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if err := paths.ApplyFlagEnv(fs); err != nil {
		t.Fatal(err)
	}
	if f.Cfg.Server.MaxDocuments != 7 || f.Addr != "127.0.0.1:1" {
		t.Errorf("env should fill unset flags only: max docs %d addr %s", f.Cfg.Server.MaxDocuments, f.Addr)
	}
}

// TestServePrefixCacheMetrics: a served shared-prefix model exports the
// prefix cache's counters on /metrics, which move once requests with a
// common system prompt are scored; with --prefix-cache-mb 0 they are absent.
func TestServePrefixCacheMetrics(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if code, _, errs := runCLI(t, "testmodel", "--out", dir, "--seed", "4", "--quant", "none"); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	for _, cacheMB := range []string{"64", "0"} {
		metrics := serve.NewMetrics()
		a := buildServe(t, func(c *app.Config) { c.Metrics = metrics }, "--model", dir, "--threads", "2", "--prefix-cache-mb", cacheMB, "--store", "none")
		backend := a.Backend
		for _, q := range []string{"When did Caroline go to the group?", "Who painted a sunset?"} {
			if _, err := backend.Score(t.Context(), rerank.Request{Query: q, Docs: []string{"Caroline went to a support group.", "Melanie painted a sunset."}}); err != nil {
				t.Fatal(err)
			}
		}
		fams, err := metrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		reused := -1.0
		for _, fam := range fams {
			if fam.GetName() == "rerankd_prefix_cache_reused_tokens_total" {
				reused = fam.GetMetric()[0].GetCounter().GetValue()
			}
		}
		if cacheMB == "0" && reused != -1 || cacheMB != "0" && reused < 20 {
			t.Errorf("--prefix-cache-mb %s: reused tokens metric %v (-1: absent)", cacheMB, reused)
		}
		// /info's engine section says what runs and why.
		if e := a.Facts.Engine; e == nil || e.Quant != "fp32" || e.Threads != 2 || e.Workers != 1 || !e.SharedPrefix ||
			fmt.Sprint(e.PrefixCacheMB) != cacheMB || e.SessionCache || !strings.Contains(e.Reason, "int8") || e.Docs != "docs/perf/int8-precision.md" ||
			e.Prepacked || !e.Prefetch || !e.FusedAttention || e.Provider != "cpu" || e.Device != 0 { // float32 under --prepack auto: unpacked, read ahead; the folder's attention form; the provider in use
			t.Errorf("engine info %+v", e)
		}
		if err := a.Close(t.Context()); err != nil {
			t.Error(err)
		}
	}
}

// TestServeHelpStatesKeyRule: the rule that refuses short API keys is in
// serve -h, not only in the error a user meets after trying.
func TestServeHelpStatesKeyRule(t *testing.T) {
	_, out, errs := runCLI(t, "serve", "-h")
	if help := out + errs; !strings.Contains(help, "-api-key") || !strings.Contains(help, "at least 8 characters") {
		t.Errorf("serve -h does not state the API key length rule:\n%s", help)
	}
	if help := out + errs; !strings.Contains(help, "OTEL_EXPORTER_OTLP_ENDPOINT") || !strings.Contains(help, "RERANKD_<FLAG>") {
		t.Errorf("serve -h does not name the environment variables:\n%s", help)
	}
}

// buildServe builds the App `rerankd serve ARGS` would serve, with edit
// applied to its Config (nil: none) for what no flag sets; Build's
// errors fail the test.
func buildServe(t *testing.T, edit func(*app.Config), args ...string) *app.App {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := servecmd.DefineFlags(fs)
	if _, err := servecmd.Parse(fs, f, args, io.Discard); err != nil {
		t.Fatal(err)
	}
	f.Cfg.Log, f.Cfg.Notices = slog.New(slog.DiscardHandler), io.Discard
	if edit != nil {
		edit(&f.Cfg)
	}
	a, err := app.Build(f.Cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
