package hf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rerankd/rerankd/model/arch"
)

// PickleWeights is the PyTorch pickle a checkpoint may ship instead of
// safetensors. rerankd never reads it: unpickling runs arbitrary code.
const PickleWeights = "pytorch_model.bin"

// LoadEncoder reads a BERT or XLM-R checkpoint folder (config.json judged
// by arch.ReadEncoderConfig, whose warnings it returns; model.safetensors
// or an index of shards, any of F32, BF16, F16) into float32 weights under
// arch's canonical names. Tensors are found under their canonical name,
// under the classifier classes' "roberta."/"bert." prefix, and under the
// LayerNorm gamma/beta names of old checkpoints (which transformers
// renames on load). Only the tensors the forward pass reads are loaded.
func LoadEncoder(dir string) (*arch.EncoderWeights, []string, error) {
	cfg, warns, err := arch.ReadEncoderConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, warns, err
	}
	if err := checkSafetensors(dir); err != nil {
		return nil, warns, err
	}
	files, where, err := openWeights(dir)
	if err != nil {
		return nil, warns, err
	}
	defer closeAll(files)
	w := &arch.EncoderWeights{Config: cfg, Tensors: map[string]*arch.Tensor{}}
	shapes := cfg.Shapes()
	var errs []error
	for _, name := range sortedKeys(shapes) {
		stored, f := lookupEncoder(cfg, name, where)
		if f == nil {
			errs = append(errs, fmt.Errorf("missing tensor %s (in none of %s, also tried %s)", name, fileList(files), strings.Join(encoderCandidates(cfg, name)[1:], ", ")))
			continue
		}
		if info := f.Tensors[stored]; !slices.Equal(info.Shape, shapes[name]) {
			errs = append(errs, fmt.Errorf("%s: tensor %s has shape %v, want %v", f.Path, stored, info.Shape, shapes[name]))
			continue
		}
		t, err := f.finiteWeights(stored)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.Tensors[name] = t
	}
	if err := errors.Join(errs...); err != nil {
		return nil, warns, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := w.Check(); err != nil {
		return nil, warns, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return w, warns, nil
}

// checkSafetensors refuses a folder whose only weights are a pickle, by
// name, before openWeights would say only that no safetensors were found.
func checkSafetensors(dir string) error {
	for _, f := range []string{SingleWeights, WeightsIndex} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return nil
		}
	}
	if _, err := os.Stat(filepath.Join(dir, PickleWeights)); err == nil {
		return fmt.Errorf("checkpoint %s: only %s: rerankd reads safetensors only (a pickle can run code when loaded); "+
			"convert it with transformers' save_pretrained(safe_serialization=True) or use the repo's safetensors revision", dir, PickleWeights)
	}
	return nil
}

// encoderCandidates are the stored names canonical may go by, in order.
func encoderCandidates(c arch.EncoderConfig, canonical string) []string {
	names := []string{canonical}
	if !arch.IsHeadTensor(canonical) {
		names = append(names, c.CheckpointPrefix()+canonical)
	}
	for _, n := range slices.Clone(names) {
		if s, ok := strings.CutSuffix(n, "LayerNorm.weight"); ok {
			names = append(names, s+"LayerNorm.gamma")
		}
		if s, ok := strings.CutSuffix(n, "LayerNorm.bias"); ok {
			names = append(names, s+"LayerNorm.beta")
		}
	}
	return names
}

func lookupEncoder(c arch.EncoderConfig, canonical string, where map[string]*File) (string, *File) {
	for _, n := range encoderCandidates(c, canonical) {
		if f := where[n]; f != nil {
			return n, f
		}
	}
	return "", nil
}

// WriteEncoderCheckpoint writes w as transformers saves it: config.json and
// model.safetensors in dtype (F32, BF16, F16), the encoder's tensors
// prefixed "roberta."/"bert." for a classifier (as
// *ForSequenceClassification.save_pretrained names them) and bare for a
// bare encoder (BertModel, XLMRobertaModel).
func WriteEncoderCheckpoint(dir string, w *arch.EncoderWeights, dtype string) error {
	dt, torch, err := parseWriteDType(dtype)
	if err != nil {
		return err
	}
	if w == nil {
		return errors.New("write checkpoint: nil weights")
	}
	if err := w.Check(); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	cfg := w.Config
	cfg.TorchDtype = torch
	if err := arch.WriteEncoderConfig(filepath.Join(dir, ConfigFile), cfg); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	stored := make(map[string]*arch.Tensor, len(w.Tensors))
	for name, t := range w.Tensors {
		if cfg.Classifier() && !arch.IsHeadTensor(name) {
			name = cfg.CheckpointPrefix() + name
		}
		stored[name] = t
	}
	if err := removeIfExists(filepath.Join(dir, WeightsIndex)); err != nil {
		return err
	}
	return SaveSafetensors(filepath.Join(dir, SingleWeights), stored, dt, map[string]string{"format": "pt"})
}
