package model

import (
	ort "github.com/yalue/onnxruntime_go"

	"github.com/rerankd/rerankd/model/onnx"
)

// graphIO lists path's inputs and outputs in ONNX Runtime's terms, read
// from the file itself: ort.GetInputOutputInfo would build a temporary
// session (all weights loaded, prepacked and optimised) only to read them,
// doubling the time to open a model.
func graphIO(path string) (ins, outs []ort.InputOutputInfo, err error) {
	in, out, err := onnx.ReadIO(path)
	if err != nil {
		return nil, nil, err
	}
	conv := func(xs []onnx.IO) []ort.InputOutputInfo {
		r := make([]ort.InputOutputInfo, len(xs))
		for i, x := range xs {
			r[i] = ort.InputOutputInfo{Name: x.Name, OrtValueType: ort.ONNXTypeTensor,
				Dimensions: ort.NewShape(x.Dims...), DataType: ort.TensorElementDataType(x.ElemType)}
			if x.NonTensor {
				r[i].OrtValueType, r[i].Dimensions, r[i].DataType = ort.ONNXTypeUnknown, nil, ort.TensorElementDataTypeUndefined
			}
		}
		return r
	}
	return conv(in), conv(out), nil
}
