package model

import (
	"strings"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
)

type typedTok struct {
	EncoderTokenizer
	maxType int
}

func (t typedTok) MaxTypeID() int { return t.maxType }

// TestCheckVocabTypeIDs: a pair template whose type_id is past the model's
// type embeddings (type_id 1000 for 2 types) is refused when the folder is
// opened, naming the cause, instead of failing every request later.
func TestCheckVocabTypeIDs(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyBERT, false)
	if err := checkVocab("dir", typedTok{maxType: cfg.TypeVocabSize - 1}, cfg); err != nil {
		t.Fatalf("in range: %v", err)
	}
	err := checkVocab("dir", typedTok{maxType: 1000}, cfg)
	if err == nil || !strings.Contains(err.Error(), "type id 1000") {
		t.Fatalf("type id 1000 for %d types: %v", cfg.TypeVocabSize, err)
	}
}
