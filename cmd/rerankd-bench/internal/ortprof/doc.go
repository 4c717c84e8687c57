// Package ortprof reads the per-node traces ONNX Runtime writes when a
// session has profiling enabled (model.SessionConfig.ProfilePrefix, `rerankd-bench
// bench --ort-profile`) and sums where a graph's time goes: per operator
// type, per run, and the rate the matrix products reach.
//
// A trace is Chrome trace JSON: an array of events, one "Session" event
// named model_run per Run call and one "Node" event per kernel execution
// (name ending in _kernel_time, duration in microseconds, the operator type
// and its input and output shapes in args). The file is written when the
// session closes, not before.
//
// Contracts:
//   - per-run figures are totals divided by the number of model_run events,
//     so warm-up runs count like the others;
//   - FLOPs are counted for the matrix-product operators only (MatrixOps),
//     from their shapes: 2·M·K·N per product, broadcast batches included;
//     ONNX's Attention as its two products, 4·(query elements)·(keys per
//     query), its softmax and masking inside the same kernel time. A
//     product counts as the float product would cost (quantised kernels
//     the same, so their rate compares with a float peak in float FLOPs).
//     Weights that ONNX Runtime prepacked are absent from a node's inputs;
//     K then comes from the activation's shape, which is why the first
//     input and the output are what the count reads;
//   - an event this package does not know is skipped, never an error; a
//     file that is not a JSON array of objects is.
//
// The package is pure Go: it does not link ONNX Runtime.
package ortprof
