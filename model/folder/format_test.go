package folder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Real post-processor shapes: Qwen3-Embedding's template, a Sequence
// wrapping it (Llama 3 style), a plain ByteLevel (Qwen3 base/reranker).
const (
	qwenEmbeddingTemplate = `{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A","type_id":0}},` +
		`{"SpecialToken":{"id":"<|endoftext|>","type_id":0}}],"pair":[],` +
		`"special_tokens":{"<|endoftext|>":{"id":"<|endoftext|>","ids":[151643],"tokens":["<|endoftext|>"]}}}`
	bosTemplate = `{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],` +
		`"special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}}`
)

func TestParsePostProcessor(t *testing.T) {
	for _, tc := range []struct {
		name         string
		raw          string
		prefix, suff []int
		ok           bool
		err          string
	}{
		{"absent", ``, nil, nil, false, ""},
		{"null", `null`, nil, nil, false, ""},
		{"byte level", `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false}`, nil, nil, false, ""},
		{"qwen3-embedding", qwenEmbeddingTemplate, nil, []int{151643}, true, ""},
		{"bos", bosTemplate, []int{1}, nil, true, ""},
		{"sequence", `{"type":"Sequence","processors":[{"type":"ByteLevel"},` + qwenEmbeddingTemplate + `]}`, nil, []int{151643}, true, ""},
		{"two templates", `{"type":"Sequence","processors":[` + bosTemplate + `,` + qwenEmbeddingTemplate + `]}`, nil, nil, false, "more than one template"},
		{"bert", `{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}`, nil, nil, false, `"BertProcessing"`},
		{"unknown special", `{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A"}},{"SpecialToken":{"id":"<x>"}}],"special_tokens":{}}`,
			nil, nil, false, `special token "<x>" has no ids`},
		{"no sequence", `{"type":"TemplateProcessing","single":[],"special_tokens":{}}`, nil, nil, false, "0 input sequences"},
		{"sequence B", `{"type":"TemplateProcessing","single":[{"Sequence":{"id":"B"}}]}`, nil, nil, false, `sequence "B"`},
		{"negative id", `{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A"}},{"SpecialToken":{"id":"x"}}],"special_tokens":{"x":{"ids":[-3]}}}`,
			nil, nil, false, "id -3"},
		{"not json", `{"type":`, nil, nil, false, "post_processor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := parsePostProcessor(json.RawMessage(tc.raw))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || ok != tc.ok || !slices.Equal(got.Prefix, tc.prefix) || !slices.Equal(got.Suffix, tc.suff) {
				t.Errorf("got %+v %v %v, want prefix %v suffix %v ok %v", got, ok, err, tc.prefix, tc.suff, tc.ok)
			}
		})
	}
}

func TestSentenceTransformersConfig(t *testing.T) {
	var s STSettings
	prompts := `{"prompts":{"query":"Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:","document":""},` +
		`"default_prompt_name":null,"similarity_fn_name":"cosine"}`
	if err := parseSTConfig([]byte(prompts), &s); err != nil {
		t.Fatal(err)
	}
	if !s.HasQuery || s.QueryPrompt != QueryPrefix(DefaultEmbedInstruction) || !s.HasDoc || s.DocPrompt != "" {
		t.Errorf("settings %+v", s)
	}
	for _, tc := range []struct {
		name, data, err string
		dim             int
	}{
		{"qwen3-embedding", `{"word_embedding_dimension":1024,"pooling_mode_cls_token":false,"pooling_mode_mean_tokens":false,` +
			`"pooling_mode_lasttoken":true,"include_prompt":true}`, "", 1024},
		{"no dimension", `{"pooling_mode_lasttoken":true}`, "", 0},
		{"mean", `{"word_embedding_dimension":384,"pooling_mode_mean_tokens":true}`, "pooling modes [mean_tokens]", 0},
		{"two modes", `{"pooling_mode_lasttoken":true,"pooling_mode_cls_token":true}`, "rerankd runs last-token pooling", 0},
		{"bad dimension", `{"pooling_mode_lasttoken":true,"word_embedding_dimension":2.5}`, "word_embedding_dimension 2.5", 0},
		{"not json", `[`, "1_Pooling/config.json", 0},
	} {
		var s STSettings
		err := parsePooling([]byte(tc.data), &s)
		if tc.err == "" && (err != nil || s.PoolingDim != tc.dim) {
			t.Errorf("%s: %v, dim %d", tc.name, err, s.PoolingDim)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestParseModelKind(t *testing.T) {
	for in, want := range map[string]ModelKind{"": KindAuto, "auto": KindAuto, "reranker": KindReranker, "embedding": KindEmbedding} {
		if got, err := ParseModelKind(in); err != nil || got != want {
			t.Errorf("ParseModelKind(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseModelKind("encoder"); err == nil {
		t.Error("ParseModelKind accepted encoder")
	}
}

// FuzzParsePostProcessor: any post_processor JSON is parsed or refused,
// never a panic, and accepted templates hold valid ids.
func FuzzParsePostProcessor(f *testing.F) {
	for _, s := range []string{qwenEmbeddingTemplate, bosTemplate, `{"type":"Sequence","processors":[` + bosTemplate + `]}`,
		`{"type":"ByteLevel"}`, `null`, `{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A"},"SpecialToken":{"id":"x"}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tmpl, ok, err := parsePostProcessor(data)
		if err != nil && ok {
			t.Fatal("ok with an error")
		}
		if !ok && (len(tmpl.Prefix) > 0 || len(tmpl.Suffix) > 0) {
			t.Fatalf("template %+v without ok", tmpl)
		}
		for _, id := range append(tmpl.Prefix, tmpl.Suffix...) {
			if id < 0 {
				t.Fatalf("negative id in %+v", tmpl)
			}
		}
	})
}

// FuzzSentenceTransformers: the sentence-transformers files are parsed or
// refused, never a panic; an accepted pooling config is last-token.
func FuzzSentenceTransformers(f *testing.F) {
	f.Add([]byte(`{"prompts":{"query":"q: ","document":""}}`))
	f.Add([]byte(`{"word_embedding_dimension":1024,"pooling_mode_lasttoken":true}`))
	f.Add([]byte(`{"pooling_mode_mean_tokens":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s STSettings
		_ = parseSTConfig(data, &s) // only must not panic
		err := parsePooling(data, &s)
		if err == nil {
			var c map[string]any
			if json.Unmarshal(data, &c) != nil || c["pooling_mode_lasttoken"] != true {
				t.Fatalf("accepted %s", data)
			}
		}
	})
}

func TestTopLevelValues(t *testing.T) {
	doc := `{"version": "1.0", "added_tokens": [{"id": 1, "content": "x"}],` + "\n" +
		`  "post_processor"  :  {"type": "ByteLevel"}, "n": 12, "model": {"post_processor": 5}}`
	got, err := topLevelValues([]byte(doc), "post_processor", "n", "absent")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"post_processor": `{"type": "ByteLevel"}`, "n": `12`} {
		m, ok := got[key]
		if !ok || string(m.raw) != want || doc[m.start:m.end] != want {
			t.Errorf("%s: %+v (span %q), want %s", key, m, doc[m.start:m.end], want)
		}
	}
	if _, ok := got["absent"]; ok {
		t.Error("found an absent key")
	}
	for _, bad := range []string{`[1]`, ``, `{"a": }`, `{"a" 1}`} {
		if _, err := topLevelValues([]byte(bad), "a"); err == nil {
			t.Errorf("topLevelValues(%q) accepted", bad)
		}
	}
}

// TestWriteEmbeddingTokenizer: only post_processor changes, byte for byte;
// a tokenizer that already has a template is copied unchanged.
func TestWriteEmbeddingTokenizer(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.json"), filepath.Join(dir, "dst.json")
	before := `{"version":"1.0","added_tokens":[{"id":151643,"content":"<|endoftext|>","special":true}],` + "\n  "
	after := `,"decoder":{"type":"ByteLevel"},"model":{"vocab":{"a":0}}}`
	if err := os.WriteFile(src, []byte(before+`"post_processor": {"type":"ByteLevel"}`+after), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeEmbeddingTokenizer(src, dst); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !strings.HasPrefix(s, before+`"post_processor": {`) || !strings.HasSuffix(s, "}"+after) {
		t.Errorf("surroundings changed:\n%s", s)
	}
	v, err := topLevelValues(out, "post_processor")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, ok, err := parsePostProcessor(v["post_processor"].raw)
	if err != nil || !ok || !slices.Equal(tmpl.Suffix, []int{151643}) || len(tmpl.Prefix) != 0 {
		t.Errorf("template %+v, %v, %v in %s", tmpl, ok, err, v["post_processor"].raw)
	}
	// Again from the result: already a template, copied as is.
	again := filepath.Join(dir, "again.json")
	if err := writeEmbeddingTokenizer(dst, again); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again); string(b) != s {
		t.Error("a tokenizer with a template was not copied unchanged")
	}
	// No <|endoftext|>: not a Qwen tokenizer.
	if err := os.WriteFile(src, []byte(`{"added_tokens":[],"post_processor":null}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeEmbeddingTokenizer(src, dst); err == nil || !strings.Contains(err.Error(), "<|endoftext|>") {
		t.Errorf("tokenizer without <|endoftext|>: %v", err)
	}
}
