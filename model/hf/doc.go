// Package hf loads real Qwen3 checkpoints (and BERT / XLM-R encoders:
// encoder.go, safetensors only, a pickle-only folder refused by name) in
// the Hugging Face layout and
// downloads them from a hub, so rerankd can serve published models rather
// than only the random test weights of model/arch.
//
// The safetensors reader is written here rather than imported because the
// format is small and the file is untrusted input: every header field is
// validated (bounded header length, known dtypes, offsets that tile the
// data section exactly) before anything is allocated from it, and data is
// read with ReadAt in chunks, so a 1.2 GB bf16 checkpoint converts to
// float32 without a second full copy. Converting everything to float32 at
// load time keeps model/ref and model/onnx free of half-precision code;
// bf16 and f16 widen exactly, so no accuracy is lost.
//
// The writer lays files out as the reference implementation does (sorted
// names, header padded to 8 bytes, "format": "pt" metadata) so checkpoints
// written for tests and tooling load in transformers too.
//
// The hub client mirrors huggingface_hub's protocol (model info, then
// resolve URLs pinned to the commit) because mirrors and proxies implement
// exactly that. It trusts the network as little as possible: downloads go
// to a .incomplete file that is renamed only after its size and, for LFS
// files, sha256 match what the hub announced; interrupted transfers resume
// with Range requests; transient failures retry with backoff. It reads no
// environment variables and draws nothing on the terminal: the CLI maps
// HF_ENDPOINT and HF_TOKEN into Config and renders Progress callbacks.
package hf
