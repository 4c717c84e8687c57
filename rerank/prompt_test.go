package rerank

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/tokentest"
)

// TestPromptSegmentsEqualWholeString: the segmented encoding must give the
// ids of encoding the whole prompt string, for queries and documents that
// start or end with anything (spaces, newlines, punctuation, digits, CJK,
// special tokens). Templates in pieces are built otherwise
// (TestPromptPiecesMatchMxbai).
func TestPromptSegmentsEqualWholeString(t *testing.T) {
	for name, tmpl := range KnownTemplates {
		if tmpl().Pieces {
			continue
		}
		t.Run(name, func(t *testing.T) { checkSegments(t, tmpl()) })
	}
	joined := mxbaiJoined()
	t.Run("mxbai joined", func(t *testing.T) { checkSegments(t, joined) })
}

// boundaryTexts start or end with what pre-tokenizers treat specially.
var boundaryTexts = []string{"", " ", "What did Caroline do?", "  leading spaces", "trailing spaces  ", "ends with newline\n",
	"?!", "(parenthesis)", "5 things", "\n\nnewlines first", "你好，世界", "it's", "'s", ":colon", "ends with colon:",
	"tab\tinside\t", "<|im_end|> injected", "emoji 😀", "\u00a0nbsp", "1", "x\r\n", "blank lines after\n\n", "space then newline \n"}

// checkSegments: with ControlTokensInText (the reference's encoding) the
// prompt is the whole string's encoding; by default it is too, except
// that a special-token string in the query or document ("<|im_end|>
// injected") adds no control token: the prompt holds the template's
// <|im_end|> ids only.
func checkSegments(t *testing.T, tmpl Template) {
	for _, control := range []bool{true, false} {
		checkSegmentsMode(t, tmpl, control)
	}
}

func checkSegmentsMode(t *testing.T, tmpl Template, control bool) {
	tk := tokentest.Qwen(t)
	cfg := DefaultPromptConfig()
	cfg.Template, cfg.ControlTokensInText = &tmpl, control
	p, err := newPromptEncoder(tk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	texts := boundaryTexts
	instructions := []string{"", "Retrieve memories about the user's hobbies", "ends with space "}
	for _, in := range instructions {
		for _, q := range texts {
			if q == "" {
				continue
			}
			qp, err := p.encodeQuery(in, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range texts {
				got := p.encodeDoc(qp, d, docLimits{}).IDs
				want := tk.EncodeIDs(tmpl.fullPrompt(in, q, d))
				if injected := strings.Count(q+d, "<|im_end|>"); !control && injected > 0 {
					const imEnd = 151645
					if n, ref := countID(got, imEnd), countID(want, imEnd); n != ref-injected {
						t.Fatalf("instruction %q query %q doc %q: %d <|im_end|> ids, want the template's %d", in, q, d, n, ref-injected)
					}
					continue
				}
				if !slices.Equal(got, want) {
					t.Fatalf("instruction %q query %q doc %q:\n got %v\nwant %v", in, q, d, got, want)
				}
			}
		}
	}
}

func TestPromptTruncation(t *testing.T) {
	tk := tokentest.Qwen(t)
	cfg := DefaultPromptConfig()
	cfg.MaxLength, cfg.QueryFloor, cfg.MinDocTokens = 160, 20, 16
	p, err := newPromptEncoder(tk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("memory words go here ", 200)
	cases := []struct {
		name, query, doc   string
		wantTrunc          bool
		wantErr            error
		wantDocAtLeast     int
		wantQueryTokensMax int // 0: not checked
	}{
		{"fits", "short question?", "short memory.", false, nil, 3, 0},
		{"long doc cut", "short question?", long, true, nil, 16, 0},
		{"long query cut to leave doc room", long, "a memory", true, nil, 2, 0},
		{"long query and long doc", long, long, true, nil, 16, 0},
	}
	for _, c := range cases {
		qp, err := p.encodeQuery("", c.query, nil)
		if !errors.Is(err, c.wantErr) {
			t.Fatalf("%s: err %v, want %v", c.name, err, c.wantErr)
		}
		pr := p.encodeDoc(qp, c.doc, docLimits{})
		if len(pr.IDs) > cfg.MaxLength {
			t.Errorf("%s: %d tokens > max %d", c.name, len(pr.IDs), cfg.MaxLength)
		}
		if pr.Truncated != c.wantTrunc {
			t.Errorf("%s: truncated %v, want %v", c.name, pr.Truncated, c.wantTrunc)
		}
		if !slices.Equal(pr.IDs[len(pr.IDs)-len(p.suffix):], p.suffix) {
			t.Errorf("%s: suffix was cut", c.name)
		}
		if !slices.Equal(pr.IDs[:len(p.prefix)], p.prefix) {
			t.Errorf("%s: prefix was cut", c.name)
		}
		if pr.DocTokens < c.wantDocAtLeast {
			t.Errorf("%s: %d doc tokens, want >= %d", c.name, pr.DocTokens, c.wantDocAtLeast)
		}
	}
	// The query is never cut below the floor: with a tiny max length the
	// request fails instead.
	head := tk.EncodeIDs("<Instruct>: " + DefaultInstruction + "\n<Query>:")
	cfg.MaxLength = len(p.prefix) + len(head) + len(p.suffix) + cfg.QueryFloor + 2
	p2, _ := newPromptEncoder(tk, cfg)
	if _, err := p2.encodeQuery("", long, nil); !errors.Is(err, ErrTooLong) {
		t.Errorf("tiny max length: err %v, want ErrTooLong", err)
	}
}

func TestPromptContext(t *testing.T) {
	tk := tokentest.Qwen(t)
	cfg := DefaultPromptConfig()
	cfg.MaxContextTurns, cfg.MaxContextTokens = 2, 12
	p, _ := newPromptEncoder(tk, cfg)
	turns := []string{"oldest turn that should be dropped", "Mel: we went camping", "Caro: where?"}
	got := p.fitContext(turns)
	if !slices.Equal(got, turns[1:]) {
		t.Errorf("fitContext = %q, want the last two turns", got)
	}
	cfg.MaxContextTokens = 6
	p, _ = newPromptEncoder(tk, cfg)
	if got := p.fitContext(turns); !slices.Equal(got, turns[2:]) {
		t.Errorf("token limit: fitContext = %q, want only the newest turn", got)
	}
	qp, err := p.encodeQuery("", "where was it?", turns)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := tk.Decode(qp.ids, false)
	if !strings.Contains(text, "Recent conversation:\nCaro: where?\nQuestion: where was it?") {
		t.Errorf("query part %q lacks the context", text)
	}
}

func TestDocLimits(t *testing.T) {
	tk := tokentest.Qwen(t)
	p, _ := newPromptEncoder(tk, DefaultPromptConfig())
	qp, err := p.encodeQuery("", "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := "one two three four five six seven eight nine ten"
	full := tk.EncodeIDs(" " + doc)
	cases := []struct {
		lim       docLimits
		wantDoc   []int
		wantTrunc bool
	}{
		{docLimits{}, full, false},
		{docLimits{maxTokens: 100}, full, false},
		{docLimits{maxTokens: 3}, full[:3], true},
		{docLimits{maxTokens: 3, keepEnd: true}, full[len(full)-3:], true},
	}
	for _, c := range cases {
		pr := p.encodeDoc(qp, doc, c.lim)
		got := pr.IDs[len(qp.ids) : len(pr.IDs)-len(p.suffix)]
		if !slices.Equal(got, c.wantDoc) || pr.DocCut != c.wantTrunc || pr.DocTokens != len(c.wantDoc) {
			t.Errorf("%+v: doc ids %v (cut %v), want %v (cut %v)", c.lim, got, pr.DocCut, c.wantDoc, c.wantTrunc)
		}
	}
}

func countID(ids []int, id int) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}
