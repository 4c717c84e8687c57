// Package folder reads and writes rerankd's model folders without running
// them, for the three kinds rerankd serves (a decoder reranker, an
// embedder, a BERT / XLM-R cross-encoder): Convert turns a Hugging Face
// checkpoint into a folder (graphs from model/onnx over weights read by
// model/hf), WriteTestModel, WriteTestEmbeddingModel and
// WriteTestEncoderCheckpoint write seeded random ones for tests,
// DetectKind tells the kinds apart, and LoadTemplate reads a folder's
// prompt template from whichever source it has. The sentence-transformers
// and tokenizer post-processor formats an embedding folder carries are
// read here too (ReadSTSettings, ReadPostProcessor). Package model opens
// what this package writes; this package imports no cgo.
package folder
