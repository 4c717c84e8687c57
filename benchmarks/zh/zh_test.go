package zh_test

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/rerankd/rerankd/benchmarks/metrics"
	"github.com/rerankd/rerankd/benchmarks/zh"
	"github.com/rerankd/rerankd/lexical"
	"github.com/rerankd/rerankd/retrieval/bm25"
)

func load(t *testing.T) *zh.Dataset {
	t.Helper()
	ds, err := zh.Load()
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestLoad(t *testing.T) {
	ds := load(t)
	if len(ds.Memories) < 150 || len(ds.Memories) > 300 {
		t.Errorf("%d memories, want 150-300", len(ds.Memories))
	}
	if len(ds.Queries) < 50 || len(ds.Queries) > 80 {
		t.Errorf("%d queries, want 50-80", len(ds.Queries))
	}
	for _, tag := range zh.Tags() {
		if n := len(ds.QrelsTagged(tag)); n < 3 {
			t.Errorf("tag %s: %d queries, want at least 3 to report it", tag, n)
		}
	}
	qrels := ds.Qrels()
	if len(qrels) != len(ds.Queries) {
		t.Fatalf("Qrels has %d queries, want %d", len(qrels), len(ds.Queries))
	}
	for _, q := range ds.Queries {
		for id, g := range q.Relevant {
			if qrels[q.ID][id] != g {
				t.Errorf("%s/%s: qrels %d, judgment %d", q.ID, id, qrels[q.ID][id], g)
			}
		}
	}
	// The qrels are a copy: changing them does not change the data set.
	qrels[ds.Queries[0].ID]["m999"] = 2
	if _, ok := ds.Queries[0].Relevant["m999"]; ok {
		t.Error("Qrels shares its maps with the data set")
	}
}

// TestNotSubstring keeps the set honest: no question may be answered by
// finding it verbatim (after the analyzer's NFKC and lowercasing).
func TestNotSubstring(t *testing.T) {
	ds := load(t)
	text := map[string]string{}
	for _, m := range ds.Memories {
		text[m.ID] = fold(m.Text)
	}
	for _, q := range ds.Queries {
		for id := range q.Relevant {
			if strings.Contains(text[id], fold(q.Text)) {
				t.Errorf("%s %q is a substring of %s %q", q.ID, q.Text, id, text[id])
			}
		}
	}
}

func fold(s string) string { return strings.ToLower(norm.NFKC.String(s)) }

func TestParseRejects(t *testing.T) {
	const mem = `[{"id":"m1","time":"2024-01-01T00:00:00+08:00","kind":"fact","speaker":"user","text":"我对芒果过敏"}]`
	tests := []struct {
		name, mems, queries, want string
	}{
		{"unknown field", mem, `[{"id":"q1","text":"过敏","tags":["overlap"],"relevant":{"m1":2},"grade":1}]`, "unknown field"},
		{"missing memory", mem, `[{"id":"q1","text":"过敏","tags":["overlap"],"relevant":{"m2":2}}]`, "does not exist"},
		{"bad grade", mem, `[{"id":"q1","text":"过敏","tags":["overlap"],"relevant":{"m1":3}}]`, "grade 3"},
		{"no answer", mem, `[{"id":"q1","text":"过敏","tags":["overlap"],"relevant":{"m1":1}}]`, "no memory with grade 2"},
		{"unknown tag", mem, `[{"id":"q1","text":"过敏","tags":["easy"],"relevant":{"m1":2}}]`, "unknown tag"},
		{"duplicate query", mem, `[{"id":"q1","text":"a","tags":["overlap"],"relevant":{"m1":2}},{"id":"q1","text":"b","tags":["overlap"],"relevant":{"m1":2}}]`, "duplicate id"},
		{"bad kind", strings.Replace(mem, `"fact"`, `"note"`, 1), `[]`, "kind"},
		{"no time", strings.Replace(mem, `"time":"2024-01-01T00:00:00+08:00",`, ``, 1), `[]`, "no time"},
		{"trailing data", mem + "[]", `[]`, "after the JSON array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := zh.Parse(strings.NewReader(tc.mems), strings.NewReader(tc.queries))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := zh.Parse(strings.NewReader(mem), strings.NewReader(`[{"id":"q1","text":"过敏","tags":["overlap"],"relevant":{"m1":2}}]`)); err != nil {
		t.Errorf("Parse of a valid pair: %v", err)
	}
}

// TestBM25Index retrieves memories for Chinese questions through
// retrieval/bm25, whose analysis is lexical's default: mixed Latin,
// full-width codes, traditional characters, one-character words.
func TestBM25Index(t *testing.T) {
	ds := load(t)
	x, err := bm25.New(bm25.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ds.Memories {
		x.Add(m.ID, m.Text)
	}
	tests := []struct {
		query, want string
		k           int // want must be among the first k hits
	}{
		{"橘子下一针疫苗什么时候打", "m033", 1},
		{"新办公室在哪栋楼第几层", "m189", 1},    // the memory has Ａ座１５楼
		{"阿傑什麼時候結婚？", "m167", 1},      // traditional
		{"App上线当天新增了多少用户", "m009", 1}, // mixed
		{"我平时喝什么茶", "m043", 1},        // 茶 is one character
		{"明年想跑哪一场全马", "m050", 1},      // 全马 for 全程马拉松
		{"我們家住在哪個區", "m109", 1},       // traditional query, simplified memory
		// ＣＡ１８３１ in the memory; 落地 ("landed", and "on-the-road price"
		// in m100) puts a car purchase first.
		{"CA1831 几点落地", "m188", 2},
	}
	for _, tc := range tests {
		hits := x.Search(tc.query, tc.k)
		if !slices.ContainsFunc(hits, func(h bm25.Hit) bool { return h.ID == tc.want }) {
			t.Errorf("Search(%q, %d) = %+v, want %s among them", tc.query, tc.k, hits, tc.want)
		}
	}
}

// TestDefaultQuality guards the default analysis against regressions on
// the whole set: the numbers in README.md, with a little slack for
// deliberate changes that should update them.
func TestDefaultQuality(t *testing.T) {
	ds := load(t)
	texts := make([]string, len(ds.Memories))
	for i, m := range ds.Memories {
		texts[i] = m.Text
	}
	s := lexical.Default()
	run := metrics.Run{}
	for _, q := range ds.Queries {
		for i, r := range s.Score(q.Text, texts) {
			run[q.ID] = append(run[q.ID], metrics.Ranked{DocID: ds.Memories[i].ID, Score: r.Raw})
		}
	}
	sum, _, err := metrics.Evaluate(ds.Qrels(), run)
	if err != nil {
		t.Fatal(err)
	}
	if sum.MAP < 0.65 || sum.NDCG10 < 0.71 {
		t.Errorf("default analysis: MAP %.4f, NDCG@10 %.4f; README.md reports 0.6736 / 0.7373", sum.MAP, sum.NDCG10)
	}
	if !slices.Contains(lexical.CJKModes(), lexical.DefaultCJK) {
		t.Fatal("default mode not listed")
	}
}
