// Package tokenizer turns text into the model inputs a model folder's
// Hugging Face tokenizer.json defines (ids, type ids, special tokens,
// truncation), id for id as the Rust tokenizers library does, for each
// family rerankd serves: byte-level BPE (Qwen2/Qwen3: added tokens, NFC,
// the Qwen split pattern), SentencePiece Unigram (XLM-RoBERTa:
// bge-reranker-v2-m3, bge-m3) and WordPiece (BERT), with the components
// listed below and the Roberta, Bert and Template post-processors. A
// component or setting it does not reproduce is refused at load, naming
// the field, never approximated. A Tokenizer is safe for concurrent use.
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
// # Unigram and WordPiece files
//
// Components reproduced (any other is refused at load with an error that
// names the field, e.g. "pre_tokenizer.pretokenizers[1]: type
// \"UnicodeScripts\" is not supported"):
//   - normalizers: Precompiled, BertNormalizer, NFC, NFD, NFKC, NFKD,
//     Lowercase, StripAccents, Strip, Replace, Prepend, Sequence (nested);
//   - pre-tokenizers: Metaspace (prepend_scheme always, never, and first
//     when no other pre-tokenizer precedes it), BertPreTokenizer,
//     Whitespace, WhitespaceSplit, Punctuation, Digits, Split, Sequence;
//   - decoders: Metaspace, WordPiece, ByteFallback, Fuse, Replace, Strip
//     (stop 0), Sequence (none: tokens joined by spaces, as the
//     reference);
//   - models: Unigram (byte_fallback included), WordPiece.
//
// Split and Replace patterns are compiled with Go's regexp and accepted
// only in the subset that reads the same in the reference's Oniguruma:
// literals, escaped metacharacters, classes, '.', groups, alternation and
// repetition; a pattern with \s \w \d \p{..}, anchors, lookaround,
// flags or one that matches the empty string is refused.
//
// Character properties and normalization follow the reference's own
// (older) Unicode tables, not Go's: its punctuation, \w, mark and control
// sets, the characters its normalization tables lack (passed through
// unchanged) and its Unicode 16 grapheme clusters in Precompiled; each is
// checked on every code point against tables written by the reference
// (refchars.go, graphemes.go). Unigram and WordPiece are checked against
// the reference (Unigram, for the current normalizer form, against
// SentencePiece itself) by pipeline_golden_test.go and every component by
// components_golden_test.go.
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
