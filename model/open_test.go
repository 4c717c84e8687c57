package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/tokenizer"
)

// TestLoadOptionsValidate: the shared options report every problem at
// once, and Open's and OpenEmbedder's options report them together with
// their own.
func TestLoadOptionsValidate(t *testing.T) {
	withLib := DefaultLoadOptions()
	withLib.RuntimeLib = "/lib/libonnxruntime.so.1"
	for _, tc := range []struct {
		name string
		edit func(o *LoadOptions)
		want []string // nil: valid
	}{
		{"onnx with a library", func(o *LoadOptions) {}, nil},
		{"reference needs no library", func(o *LoadOptions) { o.Engine, o.RuntimeLib = EngineReference, "" }, nil},
		{"onnx without a library", func(o *LoadOptions) { o.RuntimeLib = "" }, []string{"ONNX Runtime library"}},
		{"unknown engine", func(o *LoadOptions) { o.Engine = "gpu" }, []string{`engine "gpu"`}},
		{"everything wrong", func(o *LoadOptions) {
			o.Engine, o.Session.Provider, o.Session.DeviceID, o.Session.IntraOpThreads = "gpu", "npu", -1, -2
		}, []string{`engine "gpu"`, `provider "npu"`, "device id -1", "intra-op threads -2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := withLib
			tc.edit(&o)
			ro := DefaultOptions()
			ro.LoadOptions = o
			eo := DefaultEmbedderOptions()
			eo.LoadOptions = o
			for _, got := range []struct {
				who string
				err error
			}{{"LoadOptions", o.Validate()}, {"Options", ro.Validate()}, {"EmbedderOptions", eo.Validate()}} {
				if tc.want == nil {
					if got.err != nil {
						t.Errorf("%s: %v, want valid", got.who, got.err)
					}
					continue
				}
				for _, w := range tc.want {
					if got.err == nil || !strings.Contains(got.err.Error(), w) {
						t.Errorf("%s: %v, want it to mention %q", got.who, got.err, w)
					}
				}
			}
		})
	}
	// Each one's own checks join the shared ones.
	ro := DefaultOptions()
	ro.Engine, ro.PrefixCacheMB = "gpu", -1
	eo := DefaultEmbedderOptions()
	eo.Engine, eo.Embed.MaxBatch = "gpu", 0
	for _, tc := range []struct {
		who  string
		err  error
		want []string
	}{
		{"Options", ro.Validate(), []string{`engine "gpu"`, "prefix cache -1"}},
		{"EmbedderOptions", eo.Validate(), []string{`engine "gpu"`, "max batch 0"}},
	} {
		for _, w := range tc.want {
			if tc.err == nil || !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%s: %v, want it to mention %q", tc.who, tc.err, w)
			}
		}
	}
}

// TestTokenizerResolvedAlike: the reranker and the embedder find their
// tokenizer and padding id by one rule: a folder without tokenizer.json
// and no fallback is the same error from both, and the fallback (a file
// or a folder) serves both.
func TestTokenizerResolvedAlike(t *testing.T) {
	strip := func(src string) string {
		dir := cloneFolder(t, src)
		if err := os.Remove(filepath.Join(dir, tokenizer.FileName)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	rrDir := strip(tinyModel(t, onnx.HeadLogit, true))
	emDir := strip(tinyEmbeddingModel(t, onnx.EmbedHidden, false))
	ro := DefaultOptions()
	ro.RuntimeLib, ro.Session.IntraOpThreads = testenv.ORTLib(), 2
	eo := DefaultEmbedderOptions()
	eo.RuntimeLib, eo.Session.IntraOpThreads = testenv.ORTLib(), 2

	_, _, rrErr := Open(rrDir, ro)
	_, emErr := OpenEmbedder(emDir, eo)
	if rrErr == nil || emErr == nil {
		t.Fatalf("no tokenizer anywhere: Open %v, OpenEmbedder %v; want errors", rrErr, emErr)
	}
	rrMsg := strings.ReplaceAll(rrErr.Error(), rrDir, "DIR")
	emMsg := strings.ReplaceAll(emErr.Error(), emDir, "DIR")
	if want := "model folder DIR has no tokenizer.json and no tokenizer was given"; rrMsg != want || emMsg != want {
		t.Errorf("no tokenizer anywhere:\n Open:         %s\n OpenEmbedder: %s\nwant both %q", rrMsg, emMsg, want)
	}

	want, err := tokenizer.Shared(testenv.TokenizerDir())
	if err != nil {
		t.Fatalf("Qwen3 tokenizer: %v (run scripts/setup.sh)", err)
	}
	for _, fallback := range []string{testenv.TokenizerDir(), filepath.Join(testenv.TokenizerDir(), tokenizer.FileName)} {
		ro.Tokenizer, eo.Tokenizer = fallback, fallback
		sc, info, err := Open(rrDir, ro)
		if err != nil {
			t.Fatalf("Open with tokenizer %s: %v", fallback, err)
		}
		_ = sc.Close()
		if sc.Tokenizer() != want || info.PadID != padID(want) {
			t.Errorf("Open with tokenizer %s: tokenizer %p pad %d, want %p pad %d", fallback, sc.Tokenizer(), info.PadID, want, padID(want))
		}
		e, err := OpenEmbedder(emDir, eo)
		if err != nil {
			t.Fatalf("OpenEmbedder with tokenizer %s: %v", fallback, err)
		}
		_ = e.Close()
		s, ok := e.engine.(*EmbeddingSession)
		if !ok {
			t.Fatalf("OpenEmbedder engine %T, want *EmbeddingSession", e.engine)
		}
		if e.tok != want || s.base.padID != padID(want) {
			t.Errorf("OpenEmbedder with tokenizer %s: tokenizer %p pad %d, want %p pad %d", fallback, e.tok, s.base.padID, want, padID(want))
		}
	}
}

// TestPadID: the tokenizer's pad token, else its end token, else
// <|endoftext|>; Qwen's declares a pad token.
func TestPadID(t *testing.T) {
	tok := tokentest.Qwen(t)
	if !tok.Pad().Set {
		t.Fatalf("Qwen3 tokenizer declares no pad token")
	}
	if got := padID(tok); got != tok.Pad().ID {
		t.Errorf("padID = %d, want the pad token %d", got, tok.Pad().ID)
	}
}
