package model

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/batching"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/arch"
	"github.com/rerankd/rerankd/model/folder"
	"github.com/rerankd/rerankd/model/onnx"
	"github.com/rerankd/rerankd/rerank"
	"github.com/rerankd/rerankd/tokenizer"
)

// convertedEncoder writes a generated checkpoint of cfg and converts it
// into a served folder, as `rerankd-bench testmodel --arch` + `convert` do.
func convertedEncoder(t *testing.T, cfg arch.EncoderConfig) string {
	t.Helper()
	src, out := t.TempDir(), t.TempDir()
	if err := folder.WriteTestEncoderCheckpoint(src, cfg, 7, "F32", arch.Pooling{Mode: arch.PoolCLS, Normalize: true}); err != nil {
		t.Fatal(err)
	}
	if err := folder.Convert(src, out, folder.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

func fakeEncoderTokenizer(family string, vocab int) EncoderTokenizer {
	if family == arch.FamilyBERT {
		return tokentest.FakeBERT(vocab)
	}
	return tokentest.FakeXLMR(vocab)
}

func openEncoderFolder(t *testing.T, dir string, engine EngineKind, tok EncoderTokenizer, maxLen int) (*rerank.Scorer, Info) {
	t.Helper()
	o := DefaultOptions()
	o.Engine, o.RuntimeLib, o.EncoderTokenizer = engine, testenv.ORTLib(), tok
	o.Scorer.Prompt.MaxLength = maxLen
	s, info, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, info
}

// TestOpenEncoderReranker: a converted BERT / XLM-R cross-encoder folder
// opens as a pair scorer; the ORT engine's scores equal the reference
// engine's within 1e-4 over a request of mixed lengths (one cut), each
// score is sigmoid(logit), and truncated is set on the cut pair only.
func TestOpenEncoderReranker(t *testing.T) {
	long := strings.Repeat("word ", 200)
	req := rerank.Request{Query: "what did alice say", Docs: []string{"alice said hello", "bob", long, "the weather was fine on tuesday"}}
	for _, family := range []string{arch.FamilyXLMR, arch.FamilyBERT} {
		t.Run(family, func(t *testing.T) {
			cfg := arch.TinyEncoder(family, false)
			dir := convertedEncoder(t, cfg)
			tok := fakeEncoderTokenizer(family, cfg.VocabSize)
			ortS, info := openEncoderFolder(t, dir, EngineONNX, tok, 1024)
			refS, _ := openEncoderFolder(t, dir, EngineReference, tok, 1024)
			if info.Encoder == nil || info.MaxLength != cfg.MaxTokens() {
				t.Fatalf("info: encoder %v, max length %d, want the model's %d", info.Encoder, info.MaxLength, cfg.MaxTokens())
			}
			got, err := ortS.Score(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := refS.Score(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if d := math.Abs(got[i].Score - want[i].Score); d > 1e-4 {
					t.Errorf("doc %d: onnx %v, reference %v (|d| %.2g > 1e-4)", i, got[i].Score, want[i].Score, d)
				}
				if d := math.Abs(got[i].Score - rerank.Sigmoid(got[i].Logit)); d > 1e-12 {
					t.Errorf("doc %d: score %v is not sigmoid(logit %v)", i, got[i].Score, got[i].Logit)
				}
				if cut := i == 2; got[i].Truncated != cut {
					t.Errorf("doc %d: truncated %v, want %v", i, got[i].Truncated, cut)
				}
			}
			if got[2].Tokens != cfg.MaxTokens() {
				t.Errorf("cut pair: %d tokens, want the model's %d", got[2].Tokens, cfg.MaxTokens())
			}
			// The logits are the encoder's over the tokenizer's own ids.
			ids, types, _, err := tok.EncodePair(req.Query, req.Docs[0], cfg.MaxTokens())
			if err != nil {
				t.Fatal(err)
			}
			ref := refS.Engine().(*EncoderEngine).e.(*EncoderReference)
			direct, err := ref.Logits(context.Background(), []Encoded{{IDs: ids, TypeIDs: types}})
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(float64(direct[0]) - want[0].Logit); d > 1e-6 {
				t.Errorf("pair 0: scorer logit %v, EncoderReference %v", want[0].Logit, direct[0])
			}
			spreadScores(t, got)
		})
	}
}

func spreadScores(t *testing.T, s []rerank.Score) {
	t.Helper()
	for _, x := range s[1:] {
		if x.Logit != s[0].Logit {
			return
		}
	}
	t.Errorf("every pair has logit %v: the documents do not reach the model", s[0].Logit)
}

// TestEncoderScorerRefuses: what a cross-encoder cannot take is refused
// with the sentinel the server maps to 400, naming the model.
func TestEncoderScorerRefuses(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyBERT, false)
	dir := convertedEncoder(t, cfg)
	s, _ := openEncoderFolder(t, dir, EngineReference, fakeEncoderTokenizer(arch.FamilyBERT, cfg.VocabSize), 1024)
	long := strings.Repeat("w ", 100)
	for _, tc := range []struct {
		name string
		req  rerank.Request
		want error
	}{
		{"instruction", rerank.Request{Instruction: "judge", Query: "q", Docs: []string{"d"}}, rerank.ErrNoPrompt},
		{"context", rerank.Request{Context: []string{"earlier"}, Query: "q", Docs: []string{"d"}}, rerank.ErrNoPrompt},
		{"keep end", rerank.Request{KeepEnd: true, Query: "q", Docs: []string{"d"}}, rerank.ErrPairTruncation},
		{"per-document cut", rerank.Request{MaxDocTokens: 8, Query: "q", Docs: []string{"d"}}, rerank.ErrPairTruncation},
		{"no truncation", rerank.Request{NoTruncate: true, Query: "q", Docs: []string{"d", long}}, rerank.ErrDocTooLong},
		{"empty query", rerank.Request{Query: " ", Docs: []string{"d"}}, rerank.ErrEmptyQuery},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Score(context.Background(), tc.req)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if errors.Is(tc.want, rerank.ErrNoPrompt) && !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the model %s", err, dir)
			}
		})
	}
}

// TestOpenEncoderRefusesFolders: an encoder folder never runs with a
// tokenizer that is not its own kind, and an embedding model is not a
// reranker.
func TestOpenEncoderRefusesFolders(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyXLMR, false)
	qwenTok := filepath.Join(testenv.TokenizerDir(), tokenizer.FileName)
	withFile := func(t *testing.T, body []byte) string {
		dir := convertedEncoder(t, cfg)
		if body != nil {
			if err := os.WriteFile(filepath.Join(dir, tokenizer.FileName), body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	qwen, err := os.ReadFile(qwenTok)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		want string
	}{
		{"no tokenizer.json (the Qwen fallback is not used)", func(t *testing.T) string { return withFile(t, nil) }, "needs its own tokenizer.json"},
		{"Qwen's BPE tokenizer.json", func(t *testing.T) string { return withFile(t, qwen) }, "BPE tokenizer"},
		{"no post-processor", func(t *testing.T) string {
			return withFile(t, []byte(`{"model":{"type":"Unigram"},"post_processor":null}`))
		}, "no post_processor"},
		{"another tokenizer model", func(t *testing.T) string { return withFile(t, []byte(`{"model":{"type":"WordLevel"}}`)) }, `"WordLevel"`},
		{"a tokenizer larger than the model's vocabulary", func(t *testing.T) string {
			data, err := os.ReadFile(filepath.Join("..", "tokenizer", "testdata", "unigram", "xlmr-roberta.json"))
			if err != nil {
				t.Fatal(err)
			}
			return withFile(t, data)
		}, "more than the model's vocab_size 100"},
		{"an embedding model", func(t *testing.T) string { return convertedEncoder(t, arch.TinyEncoder(arch.FamilyXLMR, true)) }, "--embed-model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.RuntimeLib, o.Tokenizer = testenv.ORTLib(), testenv.TokenizerDir()
			_, _, err := Open(tc.dir(t), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestOpenEncoderOwnTokenizer: with the folder's own tokenizer.json
// (package tokenizer's WordPiece and Unigram test files, in BERT and
// XLM-R layout), Open encodes pairs through its post-processor: the
// scorer's logits are the reference encoder's over EncodePair's ids and
// type ids, and ORT's scores equal the reference engine's within 1e-4.
func TestOpenEncoderOwnTokenizer(t *testing.T) {
	req := rerank.Request{Query: "What did Alice say?", Docs: []string{"Alice said hello.", "Bob", strings.Repeat("The weather was fine. ", 40)}}
	for _, tc := range []struct{ family, file string }{
		{arch.FamilyBERT, "wordpiece/bert-uncased.json"},
		{arch.FamilyXLMR, "unigram/xlmr-roberta.json"},
	} {
		t.Run(tc.family, func(t *testing.T) {
			src := filepath.Join("..", "tokenizer", "testdata", filepath.FromSlash(tc.file))
			tok, err := tokenizer.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			cfg := arch.TinyEncoder(tc.family, false)
			cfg.VocabSize = tok.VocabSize()
			dir := convertedEncoder(t, cfg)
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tokenizer.FileName), data, 0o644); err != nil {
				t.Fatal(err)
			}
			ortS, _ := openEncoderFolder(t, dir, EngineONNX, nil, 1024)
			refS, _ := openEncoderFolder(t, dir, EngineReference, nil, 1024)
			got, err := ortS.Score(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := refS.Score(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if d := math.Abs(got[i].Score - want[i].Score); d > 1e-4 {
					t.Errorf("doc %d: onnx %v, reference %v", i, got[i].Score, want[i].Score)
				}
				if got[i].Truncated != (i == 2) {
					t.Errorf("doc %d: truncated %v", i, got[i].Truncated)
				}
			}
			enc, err := tok.EncodePair(req.Query, req.Docs[0], cfg.MaxTokens())
			if err != nil {
				t.Fatal(err)
			}
			if tc.family == arch.FamilyBERT && !slices.Contains(enc.TypeIDs, 1) {
				t.Errorf("BERT pair type ids %v: want the second segment's 1s", enc.TypeIDs)
			}
			ref := refS.Engine().(*EncoderEngine).e.(*EncoderReference)
			direct, err := ref.Logits(context.Background(), []Encoded{{IDs: enc.IDs, TypeIDs: enc.TypeIDs}})
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(float64(direct[0]) - want[0].Logit); d > 1e-6 {
				t.Errorf("pair 0: scorer logit %v, reference over EncodePair's ids %v", want[0].Logit, direct[0])
			}
			spreadScores(t, got)
		})
	}
}

// inlineEncoderCopy rewrites the converted encoder folder dir as rerankd
// wrote encoder folders before they kept external data: every graph holds
// its weights inside the protobuf, and there is no data file.
func inlineEncoderCopy(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	graphs, err := filepath.Glob(filepath.Join(dir, "model*.onnx"))
	if err != nil || len(graphs) == 0 {
		t.Fatalf("graphs of %s: %v %v", dir, graphs, err)
	}
	for _, path := range graphs {
		m, err := onnx.LoadGraph(path)
		if err != nil {
			t.Fatal(err)
		}
		m.Storage = onnx.DefaultStorage()
		sub := t.TempDir()
		if err := m.Save(sub); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(sub, onnx.ModelFile), filepath.Join(out, filepath.Base(path))); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEncoderOldInlineFolder: a folder written before encoder graphs kept
// external data (weights inside model.onnx and model.int8.onnx) still
// opens and scores exactly as the external-data folder does, and `convert
// --from OLD --out NEW` (folder.Convert on a converted folder) rewrites it
// with one shared data file and the same scores, in place too.
func TestEncoderOldInlineFolder(t *testing.T) {
	req := rerank.Request{Query: "what did alice say", Docs: []string{"alice said hello", "bob", "the weather was fine on tuesday"}}
	for _, family := range []string{arch.FamilyXLMR, arch.FamilyBERT} {
		t.Run(family, func(t *testing.T) {
			cfg := arch.TinyEncoder(family, false)
			src, dir := t.TempDir(), t.TempDir()
			if err := folder.WriteTestEncoderCheckpoint(src, cfg, 7, "F32", arch.Pooling{}); err != nil {
				t.Fatal(err)
			}
			if err := folder.Convert(src, dir, folder.BuildOptions{Quants: []onnx.Quant{onnx.QuantInt8}}); err != nil {
				t.Fatal(err)
			}
			old := inlineEncoderCopy(t, dir)
			relaid := t.TempDir()
			if err := folder.Convert(old, relaid, folder.BuildOptions{}); err != nil {
				t.Fatal(err)
			}
			inPlace := inlineEncoderCopy(t, dir)
			if err := folder.Convert(inPlace, inPlace, folder.BuildOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, q := range []onnx.Quant{onnx.QuantNone, onnx.QuantInt8} {
				graph := onnx.QuantFile(onnx.ModelFile, q)
				layouts := map[string]bool{dir: true, old: false, relaid: true, inPlace: true} // folder: external data?
				for d, external := range layouts {
					w, err := onnx.ReadWeightStorage(filepath.Join(d, graph))
					if err != nil {
						t.Fatal(err)
					}
					if got := w.External > 0 && w.Inline < inlineWarnBytes; got != external {
						t.Errorf("%s %s: external %v (inline %d, external %d bytes), want %v", filepath.Base(d), graph, got, w.Inline, w.External, external)
					}
				}
				score := func(d string) []rerank.Score {
					o := DefaultOptions()
					o.RuntimeLib, o.EncoderTokenizer, o.Quant = testenv.ORTLib(), fakeEncoderTokenizer(family, cfg.VocabSize), q
					s, _, err := Open(d, o)
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close() //nolint:errcheck // test
					got, err := s.Score(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					return got
				}
				want := score(dir)
				for _, d := range []string{old, relaid, inPlace} {
					got := score(d)
					for i := range got {
						if got[i].Logit != want[i].Logit {
							t.Errorf("%v %s doc %d: logit %v, the external-data folder's %v", q, filepath.Base(d), i, got[i].Logit, want[i].Logit)
						}
					}
				}
			}
			if _, err := os.Stat(filepath.Join(relaid, onnx.DataFile)); err != nil {
				t.Errorf("relaid folder: %v", err)
			}
			if _, err := os.Stat(filepath.Join(relaid, "config.json")); err != nil {
				t.Errorf("relaid folder lost config.json: %v", err)
			}
		})
	}
}

// TestEncoderMemPattern: encoder sessions run with memory patterns off
// unless told otherwise (SessionConfig.MemPattern), and the setting changes
// no score: over requests of changing shapes, one session with patterns
// forced on and one with the encoder default give bit-identical logits.
func TestEncoderMemPattern(t *testing.T) {
	reqs := []rerank.Request{
		{Query: "what did alice say", Docs: []string{"alice said hello", "bob", "the weather was fine on tuesday"}},
		{Query: "weather", Docs: []string{"rain", "the weather was fine on tuesday and wednesday and thursday too"}},
		{Query: "what did alice say", Docs: []string{"alice said hello", "bob", "the weather was fine on tuesday"}},
	}
	for _, family := range []string{arch.FamilyXLMR, arch.FamilyBERT} {
		t.Run(family, func(t *testing.T) {
			cfg := arch.TinyEncoder(family, false)
			src, dir := t.TempDir(), t.TempDir()
			if err := folder.WriteTestEncoderCheckpoint(src, cfg, 3, "F32", arch.Pooling{}); err != nil {
				t.Fatal(err)
			}
			if err := folder.Convert(src, dir, folder.BuildOptions{}); err != nil {
				t.Fatal(err)
			}
			scores := map[MemPattern][]rerank.Score{}
			for _, mp := range []MemPattern{MemPatternAuto, MemPatternOn} {
				o := DefaultOptions()
				o.RuntimeLib, o.EncoderTokenizer, o.Session.MemPattern = testenv.ORTLib(), fakeEncoderTokenizer(family, cfg.VocabSize), mp
				s, _, err := Open(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range reqs {
					got, err := s.Score(context.Background(), r)
					if err != nil {
						t.Fatal(err)
					}
					scores[mp] = append(scores[mp], got...)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			off, on := scores[MemPatternAuto], scores[MemPatternOn]
			if len(off) != 8 || len(on) != len(off) {
				t.Fatalf("%d and %d scores, want 8", len(off), len(on))
			}
			for i := range off {
				if off[i].Logit != on[i].Logit {
					t.Errorf("pair %d: logit %v with the encoder default, %v with memory patterns on", i, off[i].Logit, on[i].Logit)
				}
			}
		})
	}
}

// TestEncoderCallBound: the engine's default bound on a call's attention
// scores keeps every call of a MiniLM-shape encoder (12 heads) within it,
// splitting a request of long pairs into calls of fewer rows while short
// pairs still share one call; a pair over the bound runs alone.
func TestEncoderCallBound(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyBERT, false)
	cfg.NumAttentionHeads = 12
	e := &EncoderEngine{cfg: cfg, maxScores: DefaultOptions().EncoderScoresBytes}
	rows := func(n, length int) [][]int {
		out := make([][]int, n)
		for i := range out {
			out[i] = make([]int, length)
		}
		return out
	}
	sc := rerank.DefaultScorerConfig()
	for _, tc := range []struct {
		name       string
		seqs       [][]int
		splitAtAll bool // the token budget alone would make fewer calls
	}{
		{"long pairs", rows(20, 190), true},
		{"short pairs", rows(20, 30), false},
		{"one pair over the bound", rows(1, 512), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bounded := batching.Plan(tc.seqs, sc.MaxBatch, sc.BatchTokens, sc.MaxPadRatio, e.Cost, e.CallFits, false)
			plain := batching.Plan(tc.seqs, sc.MaxBatch, sc.BatchTokens, sc.MaxPadRatio, e.Cost, nil, false)
			for _, call := range bounded {
				seqs := make([][]int, len(call))
				for i, j := range call {
					seqs[i] = tc.seqs[j]
				}
				if b := encoderScoresBytes(seqs, cfg.NumAttentionHeads); len(call) > 1 && b > e.maxScores {
					t.Errorf("call of %d rows holds %d bytes of attention scores, over the bound %d", len(call), b, e.maxScores)
				}
			}
			if split := len(bounded) > len(plain); split != tc.splitAtAll {
				t.Errorf("%d calls with the bound, %d without: split %v, want %v", len(bounded), len(plain), split, tc.splitAtAll)
			}
		})
	}
	if !(&EncoderEngine{cfg: cfg}).CallFits(rows(32, 512)) {
		t.Error("an engine without a bound refused a call")
	}
}

// TestEncoderCallBoundScores: a request split by the bound on attention
// scores gets the logits it gets in one call per the token budget alone.
func TestEncoderCallBoundScores(t *testing.T) {
	cfg := arch.TinyEncoder(arch.FamilyBERT, false)
	dir := t.TempDir()
	src := t.TempDir()
	if err := folder.WriteTestEncoderCheckpoint(src, cfg, 5, "F32", arch.Pooling{}); err != nil {
		t.Fatal(err)
	}
	if err := folder.Convert(src, dir, folder.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	req := rerank.Request{Query: "what did alice say about the weather", Docs: []string{
		"alice said the weather was fine on tuesday and wednesday",
		"bob said it rained on tuesday and on wednesday and thursday",
		"carol said nothing at all about the weather that week",
		"the weather was fine on tuesday",
		"rain",
	}}
	// One row of the longest pair: every call of long pairs is one row.
	bound := int64(cfg.NumAttentionHeads) * 20 * 20 * 4
	var logits [2][]float64
	var calls [2]int
	for i, b := range []int64{0, bound} {
		o := DefaultOptions()
		o.RuntimeLib, o.EncoderTokenizer, o.EncoderScoresBytes = testenv.ORTLib(), fakeEncoderTokenizer(arch.FamilyBERT, cfg.VocabSize), b
		o.Scorer.MaxPadRatio = 0 // the token budget alone: one call without the bound
		s, _, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		prompts, err := s.Prompts(req)
		if err != nil {
			t.Fatal(err)
		}
		calls[i] = len(s.Batches(prompts))
		got, err := s.Score(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range got {
			logits[i] = append(logits[i], sc.Logit)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if calls[0] != 1 || calls[1] <= 1 {
		t.Fatalf("%d calls without the bound, %d with it: want 1 and more", calls[0], calls[1])
	}
	most := 0.0
	for j := range logits[0] {
		d := math.Abs(logits[0][j] - logits[1][j])
		if d > 1e-6 {
			t.Errorf("doc %d: logit %v in one call, %v split (diff %.2g)", j, logits[0][j], logits[1][j], d)
		}
		most = max(most, d)
	}
	t.Logf("%d calls split, %d not; largest logit difference %.2g", calls[1], calls[0], most)
}
