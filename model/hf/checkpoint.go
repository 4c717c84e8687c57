package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rerankd/rerankd/model/arch"
)

// File names of a Hugging Face checkpoint folder.
const (
	ConfigFile    = "config.json"
	SingleWeights = "model.safetensors"
	WeightsIndex  = "model.safetensors.index.json"
)

// Index is model.safetensors.index.json: which shard holds each tensor.
type Index struct {
	Metadata  map[string]any    `json:"metadata,omitempty"`
	WeightMap map[string]string `json:"weight_map"`
}

// LoadCheckpoint reads a Hugging Face checkpoint folder (config.json plus
// model.safetensors, or shards listed by model.safetensors.index.json) into
// float32 weights. Only the tensors arch expects are read; extras such as
// rotary caches, or an lm_head in a tied checkpoint, are skipped. Tensors
// saved without the "model." prefix (a bare Qwen3Model) are accepted too.
func LoadCheckpoint(dir string) (*arch.Weights, error) {
	cfg, err := arch.ReadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	return loadWeights(dir, cfg)
}

// loadWeights reads the tensors cfg expects from dir's safetensors files.
func loadWeights(dir string, cfg arch.Config) (*arch.Weights, error) {
	files, where, err := openWeights(dir)
	if err != nil {
		return nil, err
	}
	defer closeAll(files)
	w := &arch.Weights{Config: cfg, Tensors: map[string]*arch.Tensor{}}
	var errs []error
	shapes := cfg.Shapes()
	for _, name := range sortedKeys(shapes) {
		want := shapes[name]
		stored, f := lookup(name, where)
		if f == nil {
			errs = append(errs, fmt.Errorf("missing tensor %s (in none of %s)", name, fileList(files)))
			continue
		}
		info := f.Tensors[stored]
		if !slices.Equal(info.Shape, want) {
			errs = append(errs, fmt.Errorf("%s: tensor %s has shape %v, want %v", f.Path, stored, info.Shape, want))
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
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := w.Check(); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return w, nil
}

// lookup finds the file holding name, also under its name without the
// "model." prefix, and returns the stored name.
func lookup(name string, where map[string]*File) (string, *File) {
	if f := where[name]; f != nil {
		return name, f
	}
	if bare, ok := strings.CutPrefix(name, "model."); ok {
		if f := where[bare]; f != nil {
			return bare, f
		}
	}
	return "", nil
}

// openWeights opens model.safetensors or, failing that, every shard of the
// index, and maps each tensor name to the file holding it. As in
// transformers, a single file wins over an index.
func openWeights(dir string) ([]*File, map[string]*File, error) {
	single := filepath.Join(dir, SingleWeights)
	if _, err := os.Stat(single); err == nil {
		f, err := OpenSafetensors(single)
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint: %w", err)
		}
		where := map[string]*File{}
		for name := range f.Tensors {
			where[name] = f
		}
		return []*File{f}, where, nil
	}
	idx, err := ReadIndex(filepath.Join(dir, WeightsIndex))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("checkpoint %s: neither %s nor %s found", dir, SingleWeights, WeightsIndex)
	}
	if err != nil {
		return nil, nil, err
	}
	var files []*File
	byShard := map[string]*File{}
	var errs []error
	for _, shard := range idx.Shards() {
		f, err := OpenSafetensors(filepath.Join(dir, filepath.FromSlash(shard)))
		if err != nil {
			errs = append(errs, fmt.Errorf("shard listed in %s: %w", WeightsIndex, err))
			continue
		}
		files = append(files, f)
		byShard[shard] = f
	}
	where := map[string]*File{}
	for _, name := range sortedKeys(idx.WeightMap) {
		f := byShard[idx.WeightMap[name]]
		if f == nil {
			continue // the shard failed to open, already reported
		}
		if _, ok := f.Tensors[name]; !ok {
			errs = append(errs, fmt.Errorf("%s maps tensor %s to %s, which does not contain it", WeightsIndex, name, f.Path))
			continue
		}
		where[name] = f
	}
	if err := errors.Join(errs...); err != nil {
		closeAll(files)
		return nil, nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return files, where, nil
}

// ReadIndex reads a model.safetensors.index.json and checks that its shard
// names are plain relative paths (a hostile index cannot point elsewhere).
func ReadIndex(path string) (*Index, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint index: %w", err)
	}
	var idx Index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("checkpoint index %s: %w", path, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("checkpoint index %s: empty weight_map", path)
	}
	for name, shard := range idx.WeightMap {
		if !filepath.IsLocal(filepath.FromSlash(shard)) {
			return nil, fmt.Errorf("checkpoint index %s: tensor %s maps to unsafe path %q", path, name, shard)
		}
	}
	return &idx, nil
}

// Shards returns the distinct shard files of the index, sorted.
func (idx *Index) Shards() []string {
	var shards []string
	for _, s := range idx.WeightMap {
		shards = append(shards, s)
	}
	slices.Sort(shards)
	return slices.Compact(shards)
}

// closeAll closes read-only files, whose Close errors carry no information.
func closeAll(files []*File) {
	for _, f := range files {
		_ = f.Close()
	}
}

func fileList(files []*File) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f.Path)
	}
	return strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
