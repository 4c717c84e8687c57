package bm25

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/rerankd/rerankd/lexical"
)

func newIndex(t testing.TB) *Index {
	t.Helper()
	x, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// TestToyCorpus checks BM25 against values computed by hand (K1 1.2, B 0.75).
//
//	d1 "apple banana"        length 2
//	d2 "apple apple cherry"  length 3
//	d3 "cherry date"         length 2
//	N = 3, avgdl = 7/3
//
// Query "apple": df 2, idf = ln(1 + (3-2+0.5)/(2+0.5)) = ln 1.6 = 0.4700036292457356
//
//	d2: tf 2, lenNorm = 0.25 + 0.75·3/(7/3) = 1.2142857142857142
//	    score = idf · 2·2.2/(2 + 1.2·1.2142857) = 0.5981864372218453
//	d1: tf 1, lenNorm = 0.25 + 0.75·2/(7/3) = 0.8928571428571428
//	    score = idf · 2.2/(1 + 1.2·0.8928571) = 0.4991762683023675
//	    norm  = 0.4991762683023675/0.5981864372218453 = 0.8344827586206898
//
// Query "cherry date": cherry df 2 (idf ln 1.6), date df 1, idf = ln(1 + 2.5/1.5) = 0.9808292530117262
//
//	d3: (0.4700036 + 0.9808293) · 2.2/(1 + 1.2·0.8928571) = 1.5408845783975804
//	d2: 0.4700036 · 2.2/(1 + 1.2·1.2142857)              = 0.42081720292932134
func TestToyCorpus(t *testing.T) {
	x := newIndex(t)
	x.Add("d1", "apple banana")
	x.Add("d2", "apple apple cherry")
	x.Add("d3", "cherry date")

	check := func(query string, want []Hit) {
		t.Helper()
		got := x.Search(query, 10)
		if len(got) != len(want) {
			t.Fatalf("Search(%q) = %+v, want %+v", query, got, want)
		}
		for i := range want {
			if got[i].ID != want[i].ID || !near(got[i].Score, want[i].Score) || !near(got[i].Norm, want[i].Norm) {
				t.Errorf("Search(%q)[%d] = %+v, want %+v", query, i, got[i], want[i])
			}
		}
	}
	check("apple", []Hit{{"d2", 0.5981864372218453, 1}, {"d1", 0.4991762683023675, 0.8344827586206898}})
	check("Cherries, DATE!", []Hit{{"d3", 1.5408845783975804, 1}, {"d2", 0.42081720292932134, 0.42081720292932134 / 1.5408845783975804}})
	check("zebra", nil)

	if got := x.Search("apple", 1); len(got) != 1 || got[0].ID != "d2" {
		t.Errorf("k=1: %+v", got)
	}
	if got := x.Search("apple", 0); got != nil {
		t.Errorf("k=0: %+v", got)
	}
}

func TestTiesSortByID(t *testing.T) {
	x := newIndex(t)
	for _, id := range []string{"c", "a", "b"} {
		x.Add(id, "same words here")
	}
	got := x.Search("words", 10)
	if len(got) != 3 || got[0].ID != "a" || got[1].ID != "b" || got[2].ID != "c" {
		t.Fatalf("ties not sorted by id: %+v", got)
	}
	for _, h := range got {
		if h.Norm != 1 {
			t.Errorf("tied hit norm %v, want 1", h.Norm)
		}
	}
}

func TestEmpty(t *testing.T) {
	x := newIndex(t)
	if got := x.Search("anything", 10); got != nil {
		t.Errorf("empty index: %+v", got)
	}
	x.Add("a", "hello world")
	x.Add("empty", "")
	for _, q := range []string{"", "   ", "?!", "zzz"} {
		if got := x.Search(q, 10); got != nil {
			t.Errorf("query %q: %+v", q, got)
		}
	}
	if x.Len() != 2 {
		t.Errorf("Len = %d, want 2", x.Len())
	}
	if x.Delete("missing") {
		t.Error("Delete(missing) = true")
	}
}

func TestStopwordOnlyQuery(t *testing.T) {
	x := newIndex(t)
	x.Add("band", "The Who played live")
	x.Add("other", "a concert review")
	got := x.Search("the who", 10)
	if len(got) != 1 || got[0].ID != "band" {
		t.Fatalf("stopword-only query: %+v", got)
	}
}

func TestChinese(t *testing.T) {
	x := newIndex(t)
	x.Add("zh", "我喜欢画画，也喜欢猫。")
	x.Add("zh2", "今天天气很好")
	x.Add("en", "I like painting and cats")
	got := x.Search("喜欢猫", 10)
	if len(got) != 1 || got[0].ID != "zh" {
		t.Fatalf("Chinese query: %+v", got)
	}
	got = x.Search("天气", 10)
	if len(got) != 1 || got[0].ID != "zh2" {
		t.Fatalf("Chinese bigram query: %+v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	err := Config{K1: math.NaN(), B: 2}.Validate()
	if err == nil || !strings.Contains(err.Error(), "bm25: k1 NaN") || !strings.Contains(err.Error(), "bm25: b 2") {
		t.Fatalf("want both K1 and B reported, got %v", err)
	}
	if _, err := New(Config{K1: -1, B: 0.5}); err == nil {
		t.Fatal("New accepted K1 -1")
	}
	for _, c := range []Config{{K1: 0, B: 0}, {K1: 0, B: 1}, {K1: 100, B: 1}} {
		x, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		x.Add("a", "x y")
		x.Add("b", "x x x z z z z")
		for _, h := range x.Search("x z", 10) {
			if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || h.Score <= 0 || !(h.Norm >= 0 && h.Norm <= 1) {
				t.Errorf("cfg %+v: bad hit %+v", c, h)
			}
		}
	}
}

var vocab = strings.Fields("apple banana cherry date elder fig grape honey iris juniper kiwi lemon mango " +
	"nectar olive peach quince rasp straw tomato ugli vanilla walnut xigua yam zucchini the a is 我 喜欢 画画 猫")

func randText(r *rand.Rand) string {
	n := r.Intn(12)
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[r.Intn(len(vocab))]
	}
	return strings.Join(w, " ")
}

// TestIncrementalMatchesFresh applies random adds, replaces and deletes and
// checks that every search equals the one on an index built from scratch
// from the surviving documents.
func TestIncrementalMatchesFresh(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	x := newIndex(t)
	live := map[string]string{}
	for step := range 2000 {
		id := fmt.Sprintf("m%d", r.Intn(60))
		switch op := r.Intn(10); {
		case op < 6: // add or replace
			text := randText(r)
			x.Add(id, text)
			live[id] = text
		default:
			_, had := live[id]
			if got := x.Delete(id); got != had {
				t.Fatalf("step %d: Delete(%s) = %v, want %v", step, id, got, had)
			}
			delete(live, id)
		}
		if step%50 != 0 {
			continue
		}
		fresh := newIndex(t)
		for id, text := range live {
			fresh.Add(id, text)
		}
		if x.Len() != fresh.Len() {
			t.Fatalf("step %d: Len %d, fresh %d", step, x.Len(), fresh.Len())
		}
		for range 5 {
			q := randText(r)
			got, want := x.Search(q, 20), fresh.Search(q, 20)
			if len(got) != len(want) {
				t.Fatalf("step %d query %q: %d hits, fresh %d", step, q, len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || !near(got[i].Score, want[i].Score) || !near(got[i].Norm, want[i].Norm) {
					t.Fatalf("step %d query %q hit %d: %+v, fresh %+v", step, q, i, got[i], want[i])
				}
			}
			for _, h := range got {
				if math.IsNaN(h.Norm) || h.Norm < 0 || h.Norm > 1 || math.IsNaN(h.Score) || h.Score <= 0 {
					t.Fatalf("bad hit %+v", h)
				}
			}
		}
	}
	// Deleting everything leaves no postings behind.
	for id := range live {
		x.Delete(id)
	}
	if x.Len() != 0 || len(x.terms) != 0 || x.totalLen != 0 {
		t.Fatalf("after deleting all: len %d, terms %d, totalLen %d", x.Len(), len(x.terms), x.totalLen)
	}
	// ... every term number is free for reuse, and dead document numbers
	// wait for renumbering only while they are few.
	if len(x.freeTerms) != len(x.lists) || len(x.slots) > renumberMin {
		t.Fatalf("after deleting all: %d/%d term numbers free, %d document numbers",
			len(x.freeTerms), len(x.lists), len(x.slots))
	}
}

func TestConcurrent(t *testing.T) {
	x := newIndex(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(g)))
			for i := range 300 {
				id := fmt.Sprintf("g%d-%d", g, r.Intn(50))
				switch i % 3 {
				case 0:
					x.Add(id, randText(r))
				case 1:
					x.Delete(id)
				default:
					for _, h := range x.Search(randText(r), 5) {
						if !(h.Norm >= 0 && h.Norm <= 1) {
							t.Errorf("bad norm %v", h.Norm)
						}
					}
					_ = x.Len()
				}
			}
		}()
	}
	wg.Wait()
}

// TestConfigAnalyzer: the index analyses documents and queries with
// Config.Analyzer. 猫 ("cat") is a unigram of 我喜欢猫 in the default
// unigram+bigram mode, so it is found; in bigram mode the document has
// only 我喜 喜欢 欢猫 and the query only 猫: no match.
func TestConfigAnalyzer(t *testing.T) {
	bigram, err := lexical.NewAnalyzer(lexical.CJKBigram)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		an   *lexical.Analyzer
		want int
	}{{nil, 1}, {bigram, 0}} {
		cfg := DefaultConfig()
		cfg.Analyzer = tc.an
		x, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		x.Add("zh", "我喜欢猫")
		if got := x.Search("猫", 10); len(got) != tc.want {
			t.Errorf("mode %s: %d hits, want %d", x.Analyzer().Mode(), len(got), tc.want)
		}
	}
}
