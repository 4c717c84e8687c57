package model

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/model/onnx"
)

// setConfigKey sets one key of dir's config.json to a raw JSON value.
func setConfigKey(t *testing.T, dir, key, value string) {
	t.Helper()
	p := filepath.Join(dir, hf.ConfigFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = json.RawMessage(value)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConvertConfigWarnings: an unknown config.json key reaches
// BuildOptions.Warn (or, without one, slog's default logger) and the
// conversion goes on; a refused field fails it before anything is written,
// for embedding checkpoints too.
func TestConvertConfigWarnings(t *testing.T) {
	src := t.TempDir()
	writeQwen3ModelCheckpoint(t, src, []string{arch.ArchModel})
	setConfigKey(t, src, "frobnicate", `1`)
	var got []string
	o := folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), Warn: func(s string) { got = append(got, s) }}
	if err := folder.Convert(src, filepath.Join(t.TempDir(), "out"), o); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"frobnicate"`) {
		t.Errorf("warnings %q, want one naming frobnicate", got)
	}

	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	setConfigKey(t, src, "hidden_act", `"gelu_pytorch_tanh"`)
	out := filepath.Join(t.TempDir(), "refused")
	err := folder.Convert(src, out, folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
	if err == nil || !strings.Contains(err.Error(), `hidden_act "gelu_pytorch_tanh"`) {
		t.Errorf("Convert = %v, want hidden_act refused", err)
	}
	if !strings.Contains(logged.String(), "frobnicate") {
		t.Errorf("slog got %q, want the warning", logged.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused conversion wrote its output folder")
	}
}

// TestOpenCommunityConfig: opening a model folder reads config.json for
// information only; the graph fixes the computation, so fields a
// conversion would refuse (an exporter that implemented them) do not stop
// ONNX Runtime from opening it.
func TestOpenCommunityConfig(t *testing.T) {
	src := tinyModel(t, onnx.HeadYesNo, false)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	setConfigKey(t, dir, "rope_scaling", `{"rope_type":"yarn","factor":4}`)
	setConfigKey(t, dir, "exporter_notes", `"x"`)
	o := DefaultOptions()
	o.RuntimeLib = testenv.ORTLib()
	s, info, err := Open(dir, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	_ = s.Close()
	if info.Config == nil || info.Config.HiddenSize != arch.Tiny().HiddenSize {
		t.Errorf("info.Config = %+v, want the folder's sizes", info.Config)
	}
}
