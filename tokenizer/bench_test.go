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

func corpusTexts(b *testing.B) ([]string, int, int) {
	cases := readGolden(b)
	texts := make([]string, len(cases))
	tokens, bytes := 0, 0
	for i, c := range cases {
		texts[i] = c.Text
		tokens += len(c.IDs)
		bytes += len(c.Text)
	}
	return texts, tokens, bytes
}

// BenchmarkEncode_Corpus encodes the whole golden corpus per op, warm BPE
// cache (as the reference's benchmark is). scripts/bench_tokenizer.sh runs it
// on one core beside the Rust reference and prints the ratio.
func BenchmarkEncode_Corpus(b *testing.B) {
	tk := qwen(b)
	texts, tokens, bytes := corpusTexts(b)
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			tk.EncodeIDs(s)
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkEncode_CorpusOffsets is the same with offsets computed.
func BenchmarkEncode_CorpusOffsets(b *testing.B) {
	tk := qwen(b)
	texts, tokens, bytes := corpusTexts(b)
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			tk.Encode(s)
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkEncode_CorpusColdCache empties the BPE cache before every pass,
// so every distinct word is merged from bytes once per pass.
func BenchmarkEncode_CorpusColdCache(b *testing.B) {
	tk := qwen(b)
	texts, tokens, bytes := corpusTexts(b)
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	for b.Loop() {
		tk.cache.mu.Lock()
		clear(tk.cache.m)
		tk.cache.mu.Unlock()
		for _, s := range texts {
			tk.EncodeIDs(s)
		}
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}
