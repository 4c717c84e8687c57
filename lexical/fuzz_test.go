package lexical

import (
	"math"
	"strings"
	"testing"
)

// FuzzScore checks the API contract on arbitrary input: no panic, one
// result per document, every score strictly in (0,1), raw finite. The
// fuzzer supplies a query and a blob split into documents on '\x1e'.
func FuzzScore(f *testing.F) {
	const sep = "\x1e"
	for _, tc := range edgeCases() {
		if len(tc.query) > 4096 || len(tc.docs) > 16 {
			continue // keep the seed corpus small
		}
		blob := strings.Join(tc.docs, sep)
		if len(blob) > 4096 {
			continue
		}
		f.Add(tc.query, blob)
	}
	f.Add("我喜欢画画", "他喜欢画画"+sep+"我喜欢唱歌"+sep+"")
	f.Add("painted", "paint"+sep+"painting"+sep+"dog")
	f.Add("GPU加速", "使用GPU加速推理"+sep+"gpu")
	s := Default()
	f.Fuzz(func(t *testing.T, query, blob string) {
		var docs []string
		if blob != "" {
			docs = strings.Split(blob, sep)
		}
		rs := s.Score(query, docs)
		if len(rs) != len(docs) {
			t.Fatalf("len(results) = %d, want %d", len(rs), len(docs))
		}
		for i, r := range rs {
			if !(r.Score > 0 && r.Score < 1) {
				t.Fatalf("doc %d: score %v not in (0,1)", i, r.Score)
			}
			if math.IsNaN(r.Raw) || math.IsInf(r.Raw, 0) || r.Raw < 0 {
				t.Fatalf("doc %d: raw %v", i, r.Raw)
			}
		}
	})
}
