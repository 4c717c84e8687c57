package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rerankd/rerankd/model/arch"
)

// WriteCheckpoint writes w as a Hugging Face checkpoint folder: config.json
// and either model.safetensors (shards == 1) or shards files named
// model-0000i-of-0000N.safetensors with a model.safetensors.index.json.
// dtype is "F32", "BF16" or "F16" (the torch names "float32", "bfloat16"
// and "float16" work too). A weights file of the other layout left in dir is removed, since
// LoadCheckpoint prefers model.safetensors over an index.
func WriteCheckpoint(dir string, w *arch.Weights, dtype string, shards int) error {
	dt, torch, err := parseWriteDType(dtype)
	if err != nil {
		return err
	}
	if w == nil {
		return errors.New("write checkpoint: nil weights")
	}
	if shards < 1 || shards > max(len(w.Tensors), 1) {
		return fmt.Errorf("write checkpoint: shards = %d, want 1..%d (the number of tensors)", shards, len(w.Tensors))
	}
	if err := w.Check(); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	cfg := w.Config
	cfg.TorchDtype = torch
	if err := arch.WriteConfig(filepath.Join(dir, ConfigFile), cfg); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	meta := map[string]string{"format": "pt"} // transformers checks this
	if shards == 1 {
		if err := removeIfExists(filepath.Join(dir, WeightsIndex)); err != nil {
			return err
		}
		return SaveSafetensors(filepath.Join(dir, SingleWeights), w.Tensors, dt, meta)
	}
	idx := Index{WeightMap: map[string]string{}}
	var total int64
	for i, group := range splitShards(w.Tensors, shards) {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, shards)
		part := map[string]*arch.Tensor{}
		for _, t := range group {
			part[t] = w.Tensors[t]
			idx.WeightMap[t] = name
			total += int64(len(w.Tensors[t].Data) * dt.Size())
		}
		if err := SaveSafetensors(filepath.Join(dir, name), part, dt, meta); err != nil {
			return err
		}
	}
	idx.Metadata = map[string]any{"total_size": total}
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, WeightsIndex), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return removeIfExists(filepath.Join(dir, SingleWeights))
}

func parseWriteDType(s string) (DType, string, error) {
	switch s {
	case "F32", "float32":
		return F32, "float32", nil
	case "BF16", "bfloat16":
		return BF16, "bfloat16", nil
	case "F16", "float16":
		return F16, "float16", nil
	}
	return "", "", fmt.Errorf("write checkpoint: dtype %q, want F32, BF16 or F16", s)
}

// splitShards cuts the name-sorted tensors into n contiguous groups of
// roughly equal size, each non-empty.
func splitShards(tensors map[string]*arch.Tensor, n int) [][]string {
	names := sortedKeys(tensors)
	var total int
	for _, t := range tensors {
		total += len(t.Data)
	}
	groups := make([][]string, n)
	g, acc := 0, 0
	for i, name := range names {
		groups[g] = append(groups[g], name)
		acc += len(tensors[name].Data)
		left := len(names) - i - 1 // tensors not yet placed
		// Move on when this group has its share, or when every remaining
		// group needs one of the remaining tensors.
		if g < n-1 && (acc*n >= total*(g+1) || left == n-1-g) {
			g++
		}
	}
	return groups
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}
