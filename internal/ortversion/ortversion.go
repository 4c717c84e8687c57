// Package ortversion names the ONNX Runtime release rerankd is built and
// tested with, in a package without cgo, so that code which only locates
// the library (cmd/internal/paths) does not link the runtime binding.
package ortversion

// Required is the ONNX Runtime release rerankd is built and tested with
// (scripts/setup.sh installs it). Other 1.2x+ releases usually work: the
// binding needs C API version 24 or newer. model.RequiredORT is this.
const Required = "1.30.0"

// GPU is the ONNX Runtime release whose CUDA build scripts/setup_gpu.sh
// (make setup-gpu) installs: core and CUDA provider of one release, the
// same C API for the binding. model.GPUORT is this.
const GPU = "1.29.0"
