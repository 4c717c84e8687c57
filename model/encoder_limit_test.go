package model

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/tokenizer"
)

// TestEncoderEmbedderInputLimit: an encoder embedding folder cuts its
// inputs where sentence-transformers' Transformer module does
// (BGE-M3: sentence_bert_config.json max_seq_length 8192, not 512):
// max_seq_length when given, else the smaller of max_position_embeddings
// and the tokenizer's model_max_length, always within the positions; a
// caller's MaxLength lowers it. Info says where the number came from, and
// a long text's ids stop exactly there.
func TestEncoderEmbedderInputLimit(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyXLMR, true) // 66 positions: 64 tokens
	positions := cfg.MaxTokens()
	base := convertedEncoderEmbedding(t, cfg, arch.Pooling{Mode: arch.PoolCLS, Normalize: true})
	long := strings.Repeat("word ", 500)
	for _, c := range []struct {
		name       string
		stConfig   string // sentence_bert_config.json ("": none)
		tokConfig  string // tokenizer_config.json ("": none)
		maxLength  int    // EmbedConfig.MaxLength
		want       int
		wantSource string
	}{
		{name: "positions only", want: positions, wantSource: folder.SourcePositions},
		{name: "max_seq_length", stConfig: `{"max_seq_length": 40, "do_lower_case": false}`, want: 40, wantSource: folder.SourceMaxSeqLength},
		{name: "max_seq_length null", stConfig: `{"max_seq_length": null}`, want: positions, wantSource: folder.SourcePositions},
		{name: "model_max_length", tokConfig: `{"model_max_length": 30}`, want: 30, wantSource: folder.SourceModelMaxLength},
		{name: "max_seq_length over model_max_length", stConfig: `{"max_seq_length": 40}`, tokConfig: `{"model_max_length": 30}`, want: 40, wantSource: folder.SourceMaxSeqLength},
		{name: "model_max_length 1e30 (no limit)", tokConfig: `{"model_max_length": 1e30}`, want: positions, wantSource: folder.SourcePositions},
		{name: "max_seq_length beyond the positions", stConfig: `{"max_seq_length": 8192}`, want: positions, wantSource: "below " + folder.SourceMaxSeqLength + "'s 8192"},
		{name: "the caller's lower limit", stConfig: `{"max_seq_length": 40}`, maxLength: 20, want: 20, wantSource: "set by the caller"},
		{name: "the caller's higher limit", stConfig: `{"max_seq_length": 40}`, maxLength: 1000, want: positions, wantSource: "set by the caller"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyFolder(t, base)
			for name, data := range map[string]string{folder.STBertConfigFile: c.stConfig, tokenizer.ConfigFileName: c.tokConfig} {
				_ = os.Remove(filepath.Join(dir, name))
				if data != "" {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			o := DefaultEmbedderOptions()
			o.Engine, o.EncoderTokenizer, o.Embed.MaxLength = EngineReference, fakeEncoderTokenizer(cfg.Family(), cfg.VocabSize), c.maxLength
			e, err := OpenEmbedder(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close() //nolint:errcheck // test
			if e.MaxLength() != c.want || !strings.Contains(e.Info().MaxLengthSource, c.wantSource) {
				t.Errorf("limit %d from %q; want %d from %q", e.MaxLength(), e.Info().MaxLengthSource, c.want, c.wantSource)
			}
			if ids, cut := e.Tokens(long, false); len(ids) != c.want || !cut {
				t.Errorf("a long text: %d ids (cut %v), want %d, cut", len(ids), cut, c.want)
			}
		})
	}
	for _, c := range []struct {
		name, file, data, want string
		is                     error
	}{
		{"max_seq_length -5", folder.STBertConfigFile, `{"max_seq_length": -5}`, "max_seq_length -5", nil},
		{"max_seq_length 1e12", folder.STBertConfigFile, `{"max_seq_length": 1e12}`, "max_seq_length 1e+12", nil},
		{"model_max_length 0", tokenizer.ConfigFileName, `{"model_max_length": 0}`, "model_max_length 0", nil},
		{"word_embedding_dimension wrong", filepath.FromSlash(folder.STPoolingFile), `{"word_embedding_dimension": 7, "pooling_mode_cls_token": true}`, "word_embedding_dimension says 7", ErrDimension},
	} {
		t.Run("refuses "+c.name, func(t *testing.T) {
			dir := copyFolder(t, base)
			if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.data), 0o644); err != nil {
				t.Fatal(err)
			}
			o := DefaultEmbedderOptions()
			o.Engine, o.EncoderTokenizer = EngineReference, fakeEncoderTokenizer(cfg.Family(), cfg.VocabSize)
			e, err := OpenEmbedder(dir, o)
			if err == nil {
				_ = e.Close()
				t.Fatal("opened; want a refusal")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Base(c.file)) || c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q; want %q naming %s", err, c.want, c.file)
			}
		})
	}
}

// copyFolder copies a model folder's files (one level of sub-folders).
func copyFolder(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
