package folder

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/model/ref"
	"github.com/rerankd/rerankd/tokenizer"
)

// DefaultCalibrationTexts are BuildOptions.CalibrationTexts' default: two
// reranker prompts in Qwen3-Reranker's chat layout over dialog memories,
// what rerankd scores. Short, because each is a float32 forward pass in
// plain Go; a trained model is better calibrated on the operator's own
// requests (BuildOptions.CalibrationTexts).
var DefaultCalibrationTexts = []string{
	"<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. " +
		"Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n" +
		"<Instruct>: Given a question about a conversation, retrieve the memory that answers it\n" +
		"<Query>: When did Caroline go to the LGBTQ support group?\n" +
		"<Document>: Caroline: I went to a LGBTQ support group yesterday and it was so powerful.<|im_end|>\n" +
		"<|im_start|>assistant\n<think>\n\n</think>\n\n",
	"<|im_start|>user\n<Query>: What did Melanie paint last weekend, and where?\n" +
		"<Document>: Melanie: We painted a sunset over the lake on Saturday, 7 May 2023, while the kids played; " +
		"then we planned a camping trip for July.<|im_end|>\n<|im_start|>assistant\n",
}

// calibrate measures onnx.QuantInt8Smooth's activation statistics on the
// calibration texts through the reference pass and chooses its alpha.
func calibrate(w *arch.Weights, tok *tokenizer.Tokenizer, o BuildOptions) (*onnx.Calibration, float64, error) {
	texts := o.CalibrationTexts
	if texts == nil {
		texts = DefaultCalibrationTexts
	}
	if len(texts) == 0 {
		return nil, 0, fmt.Errorf("%v: no calibration texts", onnx.QuantInt8Smooth)
	}
	start := time.Now()
	cal := &onnx.Calibration{}
	tokens := 0
	for i, t := range texts {
		ids := tok.EncodeIDs(t)
		if len(ids) == 0 {
			return nil, 0, fmt.Errorf("%v: calibration text %d encodes to no tokens", onnx.QuantInt8Smooth, i)
		}
		tokens += len(ids)
		if err := ref.ProjectionInputs(w, ids, cal.Add); err != nil {
			return nil, 0, fmt.Errorf("%v calibration: %w", onnx.QuantInt8Smooth, err)
		}
	}
	alpha, errs := onnx.ChooseSmoothAlpha(w, cal)
	slog.Info(fmt.Sprintf("%v: calibrated on %d texts (%d tokens) in %.1fs; alpha %v (relative int8 error: none %.4g, alphas %v: %.4g)",
		onnx.QuantInt8Smooth, len(texts), tokens, time.Since(start).Seconds(), alphaName(alpha), errs[0], onnx.SmoothAlphas, errs[1:]))
	return cal, alpha, nil
}

func alphaName(a float64) string {
	if a < 0 {
		return "none"
	}
	return fmt.Sprint(a)
}
