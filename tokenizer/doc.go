// Package tokenizer implements exact Qwen2/Qwen3-family tokenization from a
// Hugging Face tokenizer.json: added (special) tokens, NFC normalization, the
// Qwen split pattern, byte-level mapping and byte-pair encoding; and exact
// SentencePiece Unigram tokenization (XLM-RoBERTa: bge-reranker-v2-m3,
// bge-m3) with the Precompiled, Strip and Replace normalizers, the Metaspace
// pre-tokenizer and decoder, and the Roberta and Template post-processors.
//
// # Model inputs (the contract encoders use)
//
//   - Encode / EncodeIDs: one text, no special tokens added (added tokens
//     written in the text are still recognised). Offsets are reported for
//     BPE only; a Unigram tokenizer returns nil Offsets.
//   - EncodeSingle(text, maxLen): one text with the post-processor's
//     special tokens (<s> A </s>), the text's tokens cut from the right so
//     the whole is at most maxLen (maxLen <= 0: no limit).
//   - EncodePair(query, document, maxLen): the pair with the
//     post-processor's special tokens (<s> A </s></s> B </s>), truncated
//     LongestFirst to maxLen with the special tokens' count reserved first,
//     exactly as the reference's truncate_encodings; EncodePairTruncate
//     names the strategy (LongestFirst or OnlySecond, which fails when the
//     second text alone cannot absorb the cut).
//   - Encoded holds IDs, TypeIDs (one per id, from the post-processor's
//     template), AttentionLen (= len(IDs): the unpadded length) and
//     Truncated. A maxLen below the special-token count is an error, where
//     the reference would underflow.
//   - Without a post-processor (the Qwen files) nothing is added: the pair
//     is A then B, type ids 0 then 1, as the reference does.
//
// Unigram and WordPiece are checked against the reference (Unigram, for the current
// normalizer form, against SentencePiece itself) by unigram_golden_test.go
// on a model trained with spm_train and converted in XLM-R layout, and
// WordPiece on cased and uncased BERT-layout vocabularies; the rules
// reproduced are listed in unigram.go, precompiled.go and wordpiece.go. Any
// other component of such a file is refused at load, naming the field.
//
// "Exact" means the ids equal those of the Rust Hugging Face tokenizers
// library (0.22) encoding with add_special_tokens=false; the golden test in
// this package checks that on a committed corpus produced by that library.
// A reranker fed ids it was not trained on silently scores worse, so the
// loader refuses tokenizer.json files whose pipeline it cannot reproduce
// exactly instead of approximating them.
//
// What comes from github.com/sugarme/tokenizer and what is ours: the
// byte-to-character alphabet (pretokenizer.GenerateBytesChar) and the
// added-token record type are used as they are. Its merge-table
// construction (bpe.CreateMerges, fed by encoding/json) cost ~135 MB of
// allocations per load and skipped merges naming unknown tokens where the
// reference refuses the file; parse.go streams tokenizer.json instead and
// is checked against that path (reference_load_test.go). Five parts of
// sugarme v0.3.0 are wrong for this tokenizer and are replaced here:
//   - its Split pre-tokenizer compiles the pattern with Go's regexp, which has
//     no lookahead (`\s+(?!\S)`) and panics; pretokenize.go splits by hand,
//     with Unicode White_Space for \s (Go's \s is ASCII only) and ASCII-only
//     case folding for the contractions (Go's (?i) would match `'ſ` as `'s`);
//   - its ByteLevel ignores use_regex=false and re-splits with the GPT-2
//     pattern; bpe.go maps bytes only (Tokenizer.byteChar/byteID);
//   - its NFC normalizer does not compose; normalize.go uses
//     golang.org/x/text/unicode/norm and keeps an alignment for offsets;
//   - its BPE breaks ties between equal-rank merges by an unset timestamp;
//     bpe.go merges the leftmost pair of lowest rank, as the reference does;
//   - it loses added tokens (`<|im_start|>` encodes to nothing); added.go
//     splits them out leftmost-longest before normalization.
//
// Input that is not valid UTF-8 is handled deterministically: every byte
// that does not start a valid UTF-8 sequence is read as U+FFFD (the rule of
// Go's range loop), so it encodes as the ids of "\uFFFD" and its offset
// covers that one input byte. Decode never fails; ids out of range are
// reported as an error.
//
// A Tokenizer is immutable after Load apart from its bounded BPE cache and
// is safe for concurrent use; Shared hands one instance to every caller
// that names the same file (or a byte-identical copy), at most maxShared
// distinct files at a time, least recently used dropped first. A file
// that fails to load is not remembered.
package tokenizer
