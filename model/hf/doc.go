// Package hf reads and writes checkpoints in the Hugging Face layout
// (config.json plus safetensors; a pickle-only folder is refused by name)
// for every architecture rerankd converts, Qwen3/Qwen2 decoders and BERT /
// XLM-R encoders (encoder.go), as float32 weights under arch's tensor
// names, and downloads them from a hub (or a mirror speaking its protocol),
// so rerankd serves published models rather than only the random test
// weights of model/arch. Every file is untrusted input: nothing is
// allocated from a header before it is validated, and nothing lands under
// its final name before its size and checksum match.
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
