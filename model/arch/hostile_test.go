package arch

import (
	"strings"
	"testing"
)

// TestHostileSizes: sizes no model has are refused by Validate, before
// anything is allocated for them (the review's num_hidden_layers of
// 2,000,000,000 ran out of memory after 20 s).
func TestHostileSizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config, *EncoderConfig)
		want string
	}{
		{"decoder layers 2e9", func(c *Config, _ *EncoderConfig) { c.NumHiddenLayers = 2_000_000_000 }, "num_hidden_layers 2000000000 is beyond any real model"},
		{"decoder vocab 1e9", func(c *Config, _ *EncoderConfig) { c.VocabSize = 1_000_000_000 }, "vocab_size 1000000000 is beyond"},
		{"encoder layers 2e9", func(_ *Config, e *EncoderConfig) { e.NumHiddenLayers = 2_000_000_000 }, "num_hidden_layers 2000000000 is beyond"},
		{"encoder hidden 1e7", func(_ *Config, e *EncoderConfig) { e.HiddenSize, e.NumAttentionHeads = 10_000_000, 10 }, "hidden_size 10000000 is beyond"},
		{"encoder positions 1e12", func(_ *Config, e *EncoderConfig) { e.MaxPositionEmbeddings = 1_000_000_000_000 }, "max_position_embeddings 1000000000000 is beyond"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, e := Tiny(), TinyEncoder(FamilyBERT, false)
			if err := c.Validate(); err != nil {
				t.Fatalf("tiny decoder: %v", err)
			}
			if err := e.Validate(); err != nil {
				t.Fatalf("tiny encoder: %v", err)
			}
			tc.set(&c, &e)
			err := c.Validate()
			if eerr := e.Validate(); eerr != nil {
				err = eerr
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
