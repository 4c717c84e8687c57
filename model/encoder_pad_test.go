package model

import (
	"context"
	"testing"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
)

// TestEncoderPadInsideText: an XLM-R row with the pad id inside its text
// (a literal "<pad>" in a document) scores as the reference does, whose
// positions follow transformers' create_position_ids_from_input_ids (the
// pad gets padding_idx and does not advance the count; ref's
// TestEncoderPositions pins that rule).
func TestEncoderPadInsideText(t *testing.T) {
	ctx := context.Background()
	cfg := arch.TinyEncoder(arch.FamilyXLMR, false)
	path, w := encoderFolder(t, cfg, "F32", onnx.QuantNone)
	rows := encoderRows(cfg, 6, 11)
	for i := range rows {
		if n := len(rows[i].IDs); n > 3 {
			rows[i].IDs[1], rows[i].IDs[n-2] = cfg.PadID(), cfg.PadID()
		}
	}
	got, err := openEncoder(t, path).Logits(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	want, err := NewEncoderReference(w).Logits(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "pad inside the text", got, want, 1e-4)
}
