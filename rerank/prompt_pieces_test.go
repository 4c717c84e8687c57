package rerank

import (
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/tokenizer"
)

// mxbaiPrepare is MxbaiRerankV2.prepare_inputs of mixedbread's
// mxbai-rerank package (mxbai_rerank/mxbai_rerank_v2.py at 8e709dc) for
// one pair, written from its Python line by line: maxLength is its
// max_length argument, modelMax the model's max_position_embeddings.
// HF truncation keeps the first tokens of an encoding, and
// prepare_for_model's only_second drops tokens from the end of the second
// sequence.
func mxbaiPrepare(tk *tokenizer.Tokenizer, instruction, query, doc string, maxLength, modelMax int) []int {
	ids := tk.EncodeIDs
	cut := func(x []int, n int) []int { return x[:min(len(x), max(n, 0))] }
	sep, task := ids("\n"), ids(mxbaiTask)
	prefix, suffix := ids(mxbaiPrefix), ids(mxbaiSuffix)
	predefined := len(prefix) + len(task) + len(suffix) + len(sep)
	if maxLength+predefined > modelMax {
		maxLength = modelMax - predefined
	}
	queryPrompt := "query: " + query
	if instruction != "" {
		queryPrompt = "instruction: " + instruction + "\n" + queryPrompt
	}
	q := cut(ids(queryPrompt), maxLength*3/4)
	docMax := min(modelMax-len(q)-predefined, maxLength)
	d := cut(ids("document: "+doc), docMax)
	second := cut(slices.Concat(sep, d), maxLength-len(q)) // only_second
	return slices.Concat(prefix, q, second, sep, task, suffix)
}

// TestPromptPiecesMatchMxbai: the mxbai-rerank-v2 template's prompts are
// the package's, id for id, on every boundary text (with and without an
// instruction) and when its truncation cuts the query, the document or
// both; rerankd's MaxLength is the package's max_length plus the fixed
// parts.
func TestPromptPiecesMatchMxbai(t *testing.T) {
	tk := tokentest.Qwen(t)
	tmpl := MxbaiRerankV2Template()
	fixed := len(tk.EncodeIDs(mxbaiPrefix)) + 2*len(tk.EncodeIDs("\n")) + len(tk.EncodeIDs(mxbaiTask+mxbaiSuffix))
	if got := len(tk.EncodeIDs(mxbaiTask)) + len(tk.EncodeIDs(mxbaiSuffix)); got+len(tk.EncodeIDs(mxbaiPrefix))+2 != fixed {
		t.Fatalf("task prompt and chat suffix do not split at the special token")
	}
	long := strings.Repeat("we went camping by the lake and talked ", 40)
	for _, maxLength := range []int{8192, 48, 101} {
		cfg := DefaultPromptConfig()
		cfg.MaxLength, cfg.Template = maxLength+fixed, &tmpl
		cfg.ControlTokensInText = true // the package's encoding (the reference option)
		p, err := newPromptEncoder(tk, cfg)
		if err != nil {
			t.Fatal(err)
		}
		texts := append(slices.Clone(boundaryTexts), long)
		for _, in := range []string{"", "Retrieve memories about the user's hobbies", "ends with space "} {
			for _, q := range texts {
				if q == "" {
					continue
				}
				qp, err := p.encodeQuery(in, q, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range texts {
					pr := p.encodeDoc(qp, d, docLimits{})
					want := mxbaiPrepare(tk, in, q, d, maxLength, 32768)
					if !slices.Equal(pr.IDs, want) {
						t.Fatalf("max_length %d instruction %q query %q doc %q:\n got %v\nwant %v", maxLength, in, q, d, pr.IDs, want)
					}
					if whole := tk.EncodeIDs(tmpl.fullPrompt(in, q, d)); pr.Truncated != (len(whole) > len(pr.IDs)) && !strings.Contains(d+q, "<|") {
						t.Errorf("max_length %d query %q doc %q: truncated %v, but %d of %d joined tokens kept", maxLength, q, d, pr.Truncated, len(pr.IDs), len(whole))
					}
				}
			}
		}
	}
}

// TestPromptPiecesDiffer: the pieces matter. Joining them into one string
// first gives other ids where a query or document ends in white space,
// the case the joined template got wrong.
func TestPromptPiecesDiffer(t *testing.T) {
	tk := tokentest.Qwen(t)
	tmpl := MxbaiRerankV2Template()
	cfg := DefaultPromptConfig()
	cfg.Template = &tmpl
	p, err := newPromptEncoder(tk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ query, doc string }{
		{"Where did they go?", "We went camping.\n\n"},
		{"Where did they go?  ", "We went camping."},
		{"Where did they go?", "We went camping. \n"},
	} {
		qp, err := p.encodeQuery("", c.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := p.encodeDoc(qp, c.doc, docLimits{}).IDs
		if joined := tk.EncodeIDs(tmpl.fullPrompt("", c.query, c.doc)); slices.Equal(got, joined) {
			t.Errorf("query %q doc %q: pieces equal the joined string's ids", c.query, c.doc)
		}
	}
}

// TestPromptPiecesDocLimits: a request's per-document limit cuts the
// document's own tokens, never the "document:" label before them.
func TestPromptPiecesDocLimits(t *testing.T) {
	tk := tokentest.Qwen(t)
	tmpl := MxbaiRerankV2Template()
	cfg := DefaultPromptConfig()
	cfg.Template = &tmpl
	p, err := newPromptEncoder(tk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := p.encodeQuery("", "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := "one two three four five six seven eight nine ten"
	label, full := tk.EncodeIDs("document:"), tk.EncodeIDs("document: "+doc)
	body := full[len(label):]
	sep, suffix := tk.EncodeIDs("\n"), p.suffix
	for _, c := range []struct {
		lim     docLimits
		wantDoc []int
		cut     bool
	}{
		{docLimits{}, body, false},
		{docLimits{maxTokens: 100}, body, false},
		{docLimits{maxTokens: 3}, body[:3], true},
		{docLimits{maxTokens: 3, keepEnd: true}, body[len(body)-3:], true},
	} {
		pr := p.encodeDoc(qp, doc, c.lim)
		want := slices.Concat(qp.ids, sep, label, c.wantDoc, sep, suffix)
		if !slices.Equal(pr.IDs, want) || pr.DocCut != c.cut || pr.DocTokens != len(c.wantDoc) {
			t.Errorf("%+v: ids %v (cut %v, %d doc tokens), want %v (cut %v)", c.lim, pr.IDs, pr.DocCut, pr.DocTokens, want, c.cut)
		}
	}
}
