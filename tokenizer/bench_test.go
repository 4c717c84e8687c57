package tokenizer

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoad_Qwen3 measures building the tokenizer from the real files.
func BenchmarkLoad_Qwen3(b *testing.B) {
	dir := qwenPath()
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		b.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, ConfigFileName))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromBytes(data, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCorpus encodes the whole golden corpus once per op with encode
// (calling before, if set, at the start of each op) and reports tokens/s.
func benchCorpus(b *testing.B, before func(*Tokenizer), encode func(*Tokenizer, string)) {
	tk := qwen(b)
	cases := readGolden(b)
	tokens, bytes := 0, 0
	for _, c := range cases {
		tokens += len(c.IDs)
		bytes += len(c.Text)
	}
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	for b.Loop() {
		if before != nil {
			before(tk)
		}
		for _, c := range cases {
			encode(tk, c.Text)
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func encodeIDs(tk *Tokenizer, s string) { tk.EncodeIDs(s) }

// BenchmarkEncode_Corpus encodes the whole golden corpus per op, warm BPE
// cache (as the reference's benchmark is). scripts/bench_tokenizer.sh runs it
// on one core beside the Rust reference and prints the ratio.
func BenchmarkEncode_Corpus(b *testing.B) { benchCorpus(b, nil, encodeIDs) }

// BenchmarkEncode_CorpusOffsets is the same with offsets computed.
func BenchmarkEncode_CorpusOffsets(b *testing.B) {
	benchCorpus(b, nil, func(tk *Tokenizer, s string) { tk.Encode(s) })
}

// BenchmarkEncode_CorpusColdCache empties the BPE cache before every pass,
// so every distinct word is merged from bytes once per pass.
func BenchmarkEncode_CorpusColdCache(b *testing.B) {
	benchCorpus(b, func(tk *Tokenizer) {
		tk.cache.mu.Lock()
		clear(tk.cache.m)
		tk.cache.mu.Unlock()
	}, encodeIDs)
}
