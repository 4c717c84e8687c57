package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/tokenizer"
)

// writeCheckpoint writes seeded random weights of cfg as a float32 Hugging
// Face checkpoint folder with the Qwen3 tokenizer files, and returns it.
func writeCheckpoint(t *testing.T, cfg arch.Config, seed uint64) string {
	t.Helper()
	w, err := arch.Random(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	ckpt := t.TempDir()
	if err := hf.WriteCheckpoint(ckpt, w, "F32", 1); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{tokenizer.FileName, tokenizer.ConfigFileName} {
		data, err := os.ReadFile(filepath.Join(defaultTokenizer(), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ckpt, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ckpt
}

// TestConvertUntiedReference: a checkpoint with its own lm_head
// (tie_word_embeddings false) converts, and `score --engine reference`
// scores it (the graph keeps only the folded yes-no head, no lm_head
// initializer) with the ONNX Runtime probabilities, within 1e-5.
func TestConvertUntiedReference(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the untied head, as in model")
	}
	cfg := arch.Tiny()
	cfg.TieWordEmbeddings = false
	ckpt := writeCheckpoint(t, cfg, 13)
	out := filepath.Join(t.TempDir(), "untied")
	if code, _, errs := runCLI(t, "convert", "--from", ckpt, "--out", out, "--quant", "none", "--no-shared-prefix"); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errs)
	}
	args := []string{"--model", out, "--query", "What did Caroline do?",
		"--doc", "Caroline went to the support group", "--doc", "Melanie painted a sunset", "--doc", "x"}
	onnxOut := scoreCLI(t, args...)
	refOut := scoreCLI(t, append(args, "--engine", "reference")...)
	for i := range onnxOut.Scores {
		if d := math.Abs(onnxOut.Scores[i] - refOut.Scores[i]); d > 1e-5 {
			t.Errorf("doc %d: onnx %.7f vs reference %.7f (|diff| %.3g > 1e-5)", i, onnxOut.Scores[i], refOut.Scores[i], d)
		}
	}
}

// editConfig sets keys of dir's config.json to raw JSON values.
func editConfig(t *testing.T, dir string, fields map[string]string) {
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
	for k, v := range fields {
		m[k] = json.RawMessage(v)
	}
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConvertConfigFields: config.json fields that would make transformers
// compute something rerankd does not make `rerankd convert` fail (exit 1,
// the field and its value named, no model written); keys rerankd does not
// know are listed as warnings on stderr and the conversion goes on; the
// fields' default values convert silently.
func TestConvertConfigFields(t *testing.T) {
	cfg := arch.Tiny()
	cfg.VocabSize = 151669
	refused := []struct {
		fields map[string]string
		want   []string
	}{
		{map[string]string{"rope_scaling": `{"rope_type":"yarn","factor":4.0}`}, []string{"rope_scaling", "yarn"}},
		{map[string]string{"attention_bias": `true`}, []string{"attention_bias true"}},
		{map[string]string{"hidden_act": `"gelu"`}, []string{`hidden_act "gelu"`}},
		{map[string]string{"use_sliding_window": `true`, "sliding_window": `64`, "max_window_layers": `1`}, []string{"use_sliding_window true", "sliding_window 64"}},
		{map[string]string{"layer_types": `["full_attention","sliding_attention"]`}, []string{"layer_types", "sliding_attention"}},
		{map[string]string{"rope_scaling": `{"rope_type":"linear","factor":2}`, "hidden_act": `"relu"`}, []string{"rope_scaling", "linear", "hidden_act"}},
	}
	for _, c := range refused {
		ckpt := writeCheckpoint(t, cfg, 5)
		editConfig(t, ckpt, c.fields)
		out := filepath.Join(t.TempDir(), "out")
		code, _, errs := runCLI(t, "convert", "--from", ckpt, "--out", out, "--quant", "none", "--no-shared-prefix")
		if code != 1 {
			t.Errorf("%v: exit %d, want 1; stderr %q", c.fields, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q does not mention %q", c.fields, errs, w)
			}
		}
		if _, err := os.Stat(filepath.Join(out, "model.onnx")); err == nil {
			t.Errorf("%v: a model was written", c.fields)
		}
	}

	// Defaults, as Qwen3-Reranker's config.json spells them, plus a key
	// nobody knows.
	ckpt := writeCheckpoint(t, cfg, 5)
	editConfig(t, ckpt, map[string]string{"rope_scaling": `null`, "attention_bias": `false`, "hidden_act": `"silu"`,
		"use_sliding_window": `false`, "sliding_window": `null`, "max_window_layers": `28`, "attention_dropout": `0.0`,
		"bos_token_id": `151643`, "eos_token_id": `151645`, "transformers_version": `"4.51.0"`, "use_cache": `true`,
		"initializer_range": `0.02`, "layer_types": `["full_attention","full_attention"]`, "frobnicate_heads": `3`})
	out := filepath.Join(t.TempDir(), "out")
	code, _, errs := runCLI(t, "convert", "--from", ckpt, "--out", out, "--quant", "none", "--no-shared-prefix")
	if code != 0 {
		t.Fatalf("defaults: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "warning") || !strings.Contains(errs, `"frobnicate_heads"`) {
		t.Errorf("unknown key: stderr %q, want a warning naming it", errs)
	}
	for _, known := range []string{"rope_scaling", "attention_bias", "hidden_act", "sliding_window", "bos_token_id", "transformers_version", "layer_types"} {
		if strings.Contains(errs, known) {
			t.Errorf("stderr %q mentions known key %s", errs, known)
		}
	}
}

// TestConvertRefusesDamaged: `rerankd convert` exits 1 naming the file
// and the field (or tensor) for NaN or infinite weights, a
// sentence_bert_config.json max_seq_length that is not a usable length,
// and a Pooling word_embedding_dimension the weights contradict.
func TestConvertRefusesDamaged(t *testing.T) {
	enc := arch.TinyEncoder(arch.FamilyBERT, true)
	encoder := func(t *testing.T) string {
		dir := t.TempDir()
		if err := folder.WriteTestEncoderCheckpoint(dir, enc, 1, "F32", arch.Pooling{Mode: arch.PoolMean}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, c := range []struct {
		name string
		src  func(t *testing.T) string
		want []string
	}{
		{"NaN weight", func(t *testing.T) string {
			w, err := arch.Random(arch.Tiny(), 3)
			if err != nil {
				t.Fatal(err)
			}
			w.Tensors[arch.EmbedTokens].Data[3] = float32(math.NaN())
			dir := t.TempDir()
			if err := hf.WriteCheckpoint(dir, w, "F32", 1); err != nil {
				t.Fatal(err)
			}
			return dir
		}, []string{"model.safetensors", arch.EmbedTokens, "holds NaN at index 3"}},
		{"max_seq_length -5", func(t *testing.T) string {
			dir := encoder(t)
			writeFile(t, dir, folder.STBertConfigFile, `{"max_seq_length": -5}`)
			return dir
		}, []string{folder.STBertConfigFile, "max_seq_length -5"}},
		{"max_seq_length 1e12", func(t *testing.T) string {
			dir := encoder(t)
			writeFile(t, dir, folder.STBertConfigFile, `{"max_seq_length": 1e12}`)
			return dir
		}, []string{folder.STBertConfigFile, "max_seq_length 1e+12"}},
		{"word_embedding_dimension wrong", func(t *testing.T) string {
			dir := encoder(t)
			writeFile(t, dir, filepath.FromSlash(folder.STPoolingFile), `{"word_embedding_dimension": 1024, "pooling_mode_mean_tokens": true}`)
			return dir
		}, []string{"config.json", "word_embedding_dimension 1024 disagrees with the weights"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, errs := runCLI(t, "convert", "--from", c.src(t), "--out", out, "--quant", "none")
			if code != 1 || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want 1 and nothing (stderr %q)", code, stdout, errs)
			}
			for _, w := range append([]string{"rerankd convert"}, c.want...) {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
		})
	}
}
