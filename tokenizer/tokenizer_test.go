package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello world", []string{"Hello", " world"}},
		{"it's", []string{"it", "'s"}},
		{"IT'S WE'LL", []string{"IT", "'S", " WE", "'LL"}},
		{"it'ſ", []string{"it", "'ſ"}}, // not a contraction: ' + letters
		{"x'Re", []string{"x", "'Re"}},
		{"a  b", []string{"a", " ", " b"}},
		{"a   ", []string{"a", "   "}},
		{"a \n\n b", []string{"a", " \n\n", " b"}},
		{"a\r\n\r\nb", []string{"a", "\r\n\r\n", "b"}},
		{"12345", []string{"1", "2", "3", "4", "5"}},
		{"v1.2", []string{"v", "1", ".", "2"}},
		{" ...\n\nx", []string{" ...\n\n", "x"}},
		{"(hello)", []string{"(hello", ")"}},
		{"\u00a0\u00a0word", []string{"\u00a0", "\u00a0word"}},
		{"\u3000中文", []string{"\u3000中文"}},
		{"\ufeffword", []string{"\ufeffword"}}, // U+FEFF is not whitespace
		{"a\x1cb", []string{"a", "\x1cb"}},     // U+001C is not White_Space
		{"\tfoo\t", []string{"\tfoo", "\t"}},
		{"😀😀 x", []string{"😀😀", " x"}},
	}
	for _, c := range cases {
		var got []string
		for _, s := range splitWords(c.in, nil) {
			got = append(got, c.in[s.start:s.end])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("splitWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMergeHeapEqualsScan: the heap path (long words) and the scan path
// (short words) must agree; the golden corpus only reaches the heap path
// through long whitespace runs.
func TestMergeHeapEqualsScan(t *testing.T) {
	tk := qwen(t)
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"aaaaaaaaaaaaaaaaaaaa", strings.Repeat(" ", 300), strings.Repeat("ab", 200), "internationalization"}
	alphabet := []string{"a", "b", "e", "th", "in", " ", "é", "中", "😀", "\n", "0"}
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(300) + 1 {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		words = append(words, sb.String())
	}
	for _, w := range words {
		init := func() []piece {
			p := make([]piece, len(w))
			for i := range len(w) {
				p[i] = piece{tk.byteID[w[i]], 1}
			}
			return p
		}
		a, b := tk.mergeScan(init()), tk.mergeHeap(init())
		if !slices.Equal(a, b) {
			t.Fatalf("word %q: scan %v != heap %v", w, a, b)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	tk := qwen(t)
	repl := tk.EncodeIDs("\uFFFD")
	cases := []struct {
		in      string
		sameAs  string // valid text with the same ids
		offsets []Offset
	}{
		{"\xff", "\uFFFD", []Offset{{0, 1}}},
		{"a\xffb", "a\uFFFDb", nil},
		{"\xe2\x82", "\uFFFD\uFFFD", nil}, // truncated sequence: one U+FFFD per byte
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", nil},
		{"<|endoftext|>\xc3", "<|endoftext|>\uFFFD", []Offset{{0, 13}, {13, 14}}},
	}
	for _, c := range cases {
		e := tk.Encode(c.in)
		if want := tk.EncodeIDs(c.sameAs); !slices.Equal(e.IDs, want) {
			t.Errorf("%q: ids %v, want those of %q: %v", c.in, e.IDs, c.sameAs, want)
		}
		checkOffsets(t, c.in, e)
		if c.offsets != nil && len(repl) == 1 && !slices.Equal(e.Offsets, c.offsets) {
			t.Errorf("%q: offsets %v, want %v", c.in, e.Offsets, c.offsets)
		}
		if again := tk.Encode(c.in); !slices.Equal(again.IDs, e.IDs) {
			t.Errorf("%q: not deterministic", c.in)
		}
	}
}

func TestOffsets(t *testing.T) {
	tk := qwen(t)
	cases := []struct {
		in   string
		want []string // input slice of each token
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"<|im_start|>user", []string{"<|im_start|>", "user"}},
		{"e\u0301t\u00e9", []string{"e\u0301t\u00e9"}}, // NFC joins e+U+0301 into é, one token "été"
		{" ſ's", []string{" ſ", "ſ", "'s"}},            // " ſ" = [" "+byte C5][byte BF]: both cover ſ
	}
	for _, c := range cases {
		e := tk.Encode(c.in)
		var got []string
		for _, o := range e.Offsets {
			got = append(got, c.in[o.Start:o.End])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: token spans %q (ids %v), want %q", c.in, got, e.IDs, c.want)
		}
	}
}

func TestLossyUTF8(t *testing.T) {
	cases := []struct{ in, want string }{
		{"abc", "abc"},
		{"\xff", "\uFFFD"},
		{"\xff\xff", "\uFFFD\uFFFD"},
		{"\xe2\x82", "\uFFFD"}, // truncated 3-byte sequence: one maximal subpart
		{"\xe2\x82A", "\uFFFDA"},
		{"\xf0\x90\x80", "\uFFFD"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // surrogate: ED A0 is never valid
		{"\xe0\x80\x80", "\uFFFD\uFFFD\uFFFD"}, // overlong
		{"\xc3", "\uFFFD"},
		{"a\xc3\xa9\xa9", "aé\uFFFD"},
	}
	for _, c := range cases {
		if got := lossyUTF8([]byte(c.in)); got != c.want {
			t.Errorf("lossyUTF8(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDecode(t *testing.T) {
	tk := qwen(t)
	ids := tk.EncodeIDs("<|im_start|>hi 你好<|im_end|>")
	split := tk.EncodeIDs(" ſ") // " "+first byte of ſ, then its second byte
	cases := []struct {
		ids         []int
		skipSpecial bool
		want        string
		wantErr     bool
	}{
		{ids, false, "<|im_start|>hi 你好<|im_end|>", false},
		{ids, true, "hi 你好", false},
		{split[:1], false, " \uFFFD", false}, // cut inside ſ
		{split, false, " ſ", false},
		{nil, false, "", false},
		{[]int{-1}, false, "", true},
		{[]int{tk.VocabSize()}, false, "", true},
	}
	for _, c := range cases {
		got, err := tk.Decode(c.ids, c.skipSpecial)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("Decode(%v, %v) = %q, %v; want %q, err %v", c.ids, c.skipSpecial, got, err, c.want, c.wantErr)
		}
	}
}

func TestSpecialTokensFromFiles(t *testing.T) {
	tk := qwen(t)
	if p := tk.Pad(); !p.Set || p.Content != "<|endoftext|>" {
		t.Errorf("pad = %+v", p)
	}
	if e := tk.EOS(); !e.Set || e.Content != "<|im_end|>" {
		t.Errorf("eos = %+v", e)
	}
	if tk.BOS().Set {
		t.Errorf("bos should be unset (null in tokenizer_config.json), got %+v", tk.BOS())
	}
	for _, tok := range []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>"} {
		id, ok := tk.TokenID(tok)
		if !ok || !slices.Equal(tk.EncodeIDs(tok), []int{id}) {
			t.Errorf("%s: TokenID %d,%v; Encode %v", tok, id, ok, tk.EncodeIDs(tok))
		}
	}
	thinkID, _ := tk.TokenID("<think>")
	if tk.IsSpecial(thinkID) {
		t.Error("<think> is an added token but not special in the Qwen3 files")
	}
}

func TestTinyTokenizer(t *testing.T) {
	tk := tiny(t, [][2]string{{"a", "b"}, {"ab", "c"}, {"Ġ", "x"}})
	if p := tk.Pad(); p.ID != 259+1-1 || p.Content != "<|endoftext|>" {
		t.Errorf("pad %+v", p)
	}
	if e := tk.EOS(); e.Content != "<think>" {
		t.Errorf("eos %+v", e)
	}
	cases := []struct {
		in   string
		want []int
	}{
		{"abc", []int{257}},
		{"ab", []int{256}},
		{"abd", []int{256, 'd'}},
		{" x", []int{258}},
		{"<think>abc", []int{260, 257}},
		{"cab", []int{'c', 256}},
	}
	for _, c := range cases {
		if got := tk.EncodeIDs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.in, got, c.want)
		}
	}
}

func TestLoadRejects(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(m map[string]any)
		wants []string // every problem is reported
	}{
		{"wordpiece", func(m map[string]any) { m["model"].(map[string]any)["type"] = "WordPiece" }, []string{"WordPiece"}},
		{"gpt2 pattern and NFKC", func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "use_regex": true}
			m["normalizer"] = map[string]any{"type": "NFKC"}
		}, []string{"pre_tokenizer", "NFKC"}},
		{"lstrip token", func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 256, "content": "<x>", "lstrip": true}}
		}, []string{"lstrip"}},
		{"huge id", func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 1e12, "content": "<x>"}}
		}, []string{"out of range"}},
		{"sparse id", func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 1000000, "content": "<x>"}}
		}, []string{"contiguous"}},
		{"missing byte token", func(m map[string]any) {
			v := m["model"].(map[string]any)["vocab"].(map[string]int)
			v["zz"] = v["a"]
			delete(v, "a")
		}, []string{"byte-level token"}},
		{"bad merge", func(m map[string]any) {
			m["model"].(map[string]any)["merges"] = []any{[]string{"a"}}
		}, []string{"merge 0"}},
	}
	for _, c := range cases {
		_, err := FromBytes(tinyJSON(t, nil, c.edit), nil)
		if err == nil {
			t.Errorf("%s: loaded, want an error", c.name)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
	if _, err := FromBytes([]byte(`{"model":`), nil); err == nil {
		t.Error("truncated JSON loaded")
	}
	if _, err := FromBytes(tinyJSON(t, nil, nil), []byte(`{"pad_token": "<nope>"}`)); err == nil {
		t.Error("config naming an unknown pad token loaded")
	}
	if _, err := Load("/nonexistent/tokenizer.json"); err == nil {
		t.Error("missing file loaded")
	}
}

// TestConcurrentEncode runs the corpus from several goroutines at once (run
// under -race by make test) and compares with sequential results.
func TestConcurrentEncode(t *testing.T) {
	tk := qwen(t)
	cases := readGolden(t)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(cases); i += 3 {
				if !slices.Equal(tk.EncodeIDs(cases[i].Text), cases[i].IDs) {
					errs <- cases[i].Text
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for s := range errs {
		t.Errorf("concurrent encode differs for %q", s)
	}
	// EncodeBatch spreads its texts over GOMAXPROCS goroutines.
	batch := cases[:min(len(cases), 64)]
	texts := make([]string, len(batch))
	for i, c := range batch {
		texts[i] = c.Text
	}
	for i, e := range tk.EncodeBatch(texts) {
		if !slices.Equal(e.IDs, batch[i].IDs) {
			t.Errorf("EncodeBatch differs for %q", batch[i].Text)
		}
	}
}

func TestCacheBounded(t *testing.T) {
	c := newWordCache(100)
	for i := range 1000 {
		c.put(strings.Repeat("x", i%300), []piece{{1, 1}})
		if c.len() > 100 {
			t.Fatalf("cache grew to %d entries, bound 100", c.len())
		}
	}
	if _, ok := c.get(strings.Repeat("x", 299)); ok {
		t.Error("word longer than maxCachedWord was cached")
	}
	if _, ok := c.get(strings.Repeat("x", (999 % 300))); !ok {
		t.Error("most recent word not cached")
	}
}
