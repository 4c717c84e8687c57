package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
)

// benchMemories are 32 memory-sized texts (one or two sentences each).
func benchMemories() []string {
	who := []string{"Caroline", "Melanie", "Alice", "Bob"}
	what := []string{
		"went to the LGBTQ support group on Tuesday evening and said it helped her feel understood",
		"painted a sunset over the lake for her mother's birthday and plans to frame it next week",
		"moved to Berlin in May for a new job at a small robotics company near the river",
		"adopted a rescue cat called Miso who is afraid of the vacuum cleaner and loves the balcony",
		"is allergic to peanuts and always asks restaurants about their cooking oil before ordering",
		"ran her first half marathon in two hours and ten minutes and wants to try a full one in spring",
		"prefers tea to coffee, drinks it without sugar, and keeps a tin of jasmine tea at the office",
		"started learning Japanese with an evening class because she wants to visit Kyoto next autumn",
	}
	out := make([]string, 0, 32)
	for i := range 32 {
		out = append(out, fmt.Sprintf("%s %s (note %d).", who[i%len(who)], what[(i/len(who)+i)%len(what)], i))
	}
	return out
}

// BenchmarkEmbeddings_Served compares /v1/embeddings (a batch of 32
// memory-sized texts, over loopback HTTP, JSON floats decoded by the
// client, and base64) with calling the embedder directly on the same
// texts, the three in a rotating order each iteration so that a busy
// machine slows them alike. The model is an all-MiniLM-L6-v2-shaped BERT
// bi-encoder (full size, seeded random weights: speed only). Reported:
// served/direct throughput (direct time / served time), per format.
func BenchmarkEmbeddings_Served(b *testing.B) {
	tmp := b.TempDir()
	src, dir := filepath.Join(tmp, "ckpt"), filepath.Join(tmp, "minilm")
	var out, errs bytes.Buffer
	if code := run([]string{"testmodel", "--arch", "bert", "--kind", "embedding", "--size", "full", "--out", src}, nil, &out, &errs); code != 0 {
		b.Fatal(errs.String())
	}
	if code := run([]string{"convert", "--from", src, "--out", dir, "--quant", "none"}, nil, &out, &errs); code != 0 {
		b.Fatal(errs.String())
	}
	_ = testenv.ORTLib()
	s := startEmbedServer(b, tokentest.FakeBERT(30522), "--embed-model", dir, "--store", "none")
	q := s.q
	texts := benchMemories()
	post := func(format string) []api.Embedding {
		body, _ := json.Marshal(map[string]any{"input": texts, "encoding_format": format})
		resp, err := http.Post(s.url+"/v1/embeddings", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close() //nolint:errcheck // read below
		var r api.EmbeddingsResponse
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || len(r.Data) != len(texts) {
			b.Fatalf("%d %v", resp.StatusCode, err)
		}
		return r.Data
	}
	direct := func() {
		if _, err := q.Embed(b.Context(), texts, false); err != nil {
			b.Fatal(err)
		}
	}
	direct() // warm up both paths
	post("float")
	// The three run in a rotating order, so that none always follows
	// another (a call right after another one ran measurably slower here).
	var tDirect, tFloat, tB64 time.Duration
	calls := []struct {
		run func()
		sum *time.Duration
	}{{direct, &tDirect}, {func() { post("float") }, &tFloat}, {func() { post("base64") }, &tB64}}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		for k := range calls {
			c := calls[(i+k)%len(calls)]
			t0 := time.Now()
			c.run()
			*c.sum += time.Since(t0)
		}
		i++
	}
	n := float64(b.N)
	b.ReportMetric(float64(tDirect.Microseconds())/1000/n, "direct-ms/op")
	b.ReportMetric(float64(tFloat.Microseconds())/1000/n, "served-float-ms/op")
	b.ReportMetric(float64(tB64.Microseconds())/1000/n, "served-base64-ms/op")
	b.ReportMetric(float64(tDirect)/float64(tFloat), "served/direct-float")
	b.ReportMetric(float64(tDirect)/float64(tB64), "served/direct-base64")
}
