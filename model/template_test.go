package model

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/hf"
	"github.com/rerankd/rerankd/rerank"
)

// TestConvertWritesTemplate: a converted folder records its template with
// the answer ids; opening it reads that file, not the default, and a
// Qwen2 source without one is refused naming --template.
func TestConvertWritesTemplate(t *testing.T) {
	w, err := arch.Random(arch.Tiny(), 3)
	if err != nil {
		t.Fatal(err)
	}
	src, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	if err := hf.WriteCheckpoint(src, w, "F32", 1); err != nil {
		t.Fatal(err)
	}
	// A MemReranker-style folder whose own template asks for 1/0 answers
	// and another instruction.
	custom := rerank.Qwen3RerankerTemplate()
	custom.Name, custom.YesToken, custom.NoToken, custom.DefaultInstruction = "custom", "1", "0", "Find memories"
	if err := folder.WriteTemplate(src, custom); err != nil {
		t.Fatal(err)
	}
	if err := folder.Convert(src, out, folder.BuildOptions{Tokenizer: testenv.TokenizerDir(), NoSharedPrefix: true}); err != nil {
		t.Fatal(err)
	}
	got, err := rerank.ReadTemplateFile(filepath.Join(out, rerank.TemplateFile))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "custom" || got.YesID == nil || *got.YesID != 16 || got.NoID == nil || *got.NoID != 15 || got.DefaultInstruction != "Find memories" {
		t.Errorf("written template %+v", got)
	}
	s, info := openEngine(t, out, "plain", 0)
	if info.YesID != 16 || info.NoID != 15 || s.Template().Name != "custom" {
		t.Errorf("opened: answers %d/%d, template %q", info.YesID, info.NoID, s.Template().Name)
	}
	p, err := s.Prompts(rerank.Request{Query: "q", Docs: []string{"d"}})
	if err != nil {
		t.Fatal(err)
	}
	if text, err := tokentest.Qwen(t).Decode(p[0].IDs, false); err != nil || !strings.Contains(text, "<Instruct>: Find memories") {
		t.Errorf("prompt %q does not use the folder's instruction (%v)", text, err)
	}

	w2, err := arch.Random(arch.Qwen2Tiny(), 3)
	if err != nil {
		t.Fatal(err)
	}
	src2 := t.TempDir()
	if err := hf.WriteCheckpoint(src2, w2, "F32", 1); err != nil {
		t.Fatal(err)
	}
	err = folder.Convert(src2, filepath.Join(t.TempDir(), "out"), folder.BuildOptions{Tokenizer: testenv.TokenizerDir()})
	if err == nil || !strings.Contains(err.Error(), "--template") {
		t.Errorf("Convert of a Qwen2 checkpoint without a template = %v, want it refused naming --template", err)
	}
}
