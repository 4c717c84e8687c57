package tokenizer

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// BenchmarkLoad_Qwen3 measures Load of the real files (reading them
// included), for the streaming parser and for the previous encoding/json +
// sugarme loader. The vs_reference case runs both in turn in every
// iteration and reports their ratios: speedup (reference time / ours) and
// alloc_ratio (our allocated bytes / the reference's).
func BenchmarkLoad_Qwen3(b *testing.B) {
	dir := qwenPath()
	file := filepath.Join(dir, FileName)
	if _, err := os.Stat(file); err != nil {
		b.Fatal(err)
	}
	reference := func(path string) (*Tokenizer, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cfg, _ := os.ReadFile(filepath.Join(filepath.Dir(path), ConfigFileName))
		return referenceFromBytes(data, cfg)
	}
	for _, c := range []struct {
		name string
		load func(string) (*Tokenizer, error)
	}{{"stream", Load}, {"reference", reference}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.load(file); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("vs_reference", func(b *testing.B) {
		type cost struct {
			d     time.Duration
			bytes uint64
		}
		var ours, ref cost
		measure := func(acc *cost, load func(string) (*Tokenizer, error)) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			if _, err := load(file); err != nil {
				b.Fatal(err)
			}
			acc.d += time.Since(start)
			runtime.ReadMemStats(&after)
			acc.bytes += after.TotalAlloc - before.TotalAlloc
		}
		for b.Loop() {
			measure(&ours, Load)
			measure(&ref, reference)
		}
		n := float64(b.N)
		b.ReportMetric(ours.d.Seconds()/n, "s/load")
		b.ReportMetric(ref.d.Seconds()/n, "s/load-reference")
		b.ReportMetric(float64(ours.bytes)/n/1e6, "MB/load")
		b.ReportMetric(float64(ref.bytes)/n/1e6, "MB/load-reference")
		b.ReportMetric(ref.d.Seconds()/ours.d.Seconds(), "speedup")
		b.ReportMetric(float64(ours.bytes)/float64(ref.bytes), "alloc_ratio")
	})
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
