package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/internal/testenv"
)

// clientAnswer is one SDK call's outcome in scripts/clients/embed.mjs.
type clientAnswer struct {
	Error   string          `json:"error"`
	Model   string          `json:"model"`
	Vectors [][]float32     `json:"vectors"`
	Usage   json.RawMessage `json:"usage"`
	// openai_error
	Status  int     `json:"status"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// TestEmbeddingClients: real client SDKs, unmodified and pinned
// (scripts/clients), pointed at an in-process rerankd by base URL, get
// the server's own vectors: OpenAI's SDK (its default base64 and float),
// LangChain's OpenAIEmbeddings (documents and query), the Vercel AI SDK's
// embed/embedMany through @ai-sdk/openai-compatible, and Hugging Face's
// inference client on TEI's /embed. The model is a generated
// Qwen3-Embedding-layout folder with seeded random weights.
func TestEmbeddingClients(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Node client SDKs (make test runs it)")
	}
	argv, nodePath := testenv.EmbedClients(t)
	dir := filepath.Join(t.TempDir(), "qwen3-embed")
	if code, _, errs := runCLI(t, "testmodel", "--kind", "embedding", "--size", "tiny", "--seed", "5", "--out", dir); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	s := startEmbedServer(t, nil, "--embed-model", dir, "--store", "none", "--embed-served-model-name", "qwen3-embed-tiny,text-embedding-3-small")
	texts := []string{"Caroline went to the LGBTQ support group on 7 May", "Melanie painted a sunset over the lake", "alice moved to berlin"}
	var want api.EmbeddingsResponse
	if code, body := postJSON(t, s.url+"/v1/embeddings", map[string]any{"input": texts}, &want); code != 200 {
		t.Fatalf("/v1/embeddings: %d %s", code, body)
	}
	cmd := exec.CommandContext(t.Context(), argv[0], append(argv[1:], s.url, "text-embedding-3-small")...)
	cmd.Args = append(cmd.Args, texts...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "NODE_NO_WARNINGS=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var got map[string]clientAnswer
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %s: %v", out, err)
	}
	first := [][]float32{want.Data[0].Embedding.Values}
	all := make([][]float32, len(texts))
	for i, d := range want.Data {
		all[i] = d.Embedding.Values
	}
	for _, c := range []struct {
		name string
		want [][]float32
		tol  float64
	}{
		{"openai_default", all, 0}, // base64: the very same float32s
		{"openai_float", all, 1e-6},
		{"openai_single", first, 0},
		{"langchain_documents", all, 1e-6},
		{"ai_embed", first, 1e-6},
		{"ai_embedMany", all, 1e-6},
		{"hf_feature_extraction", all, 1e-6},
	} {
		a, ok := got[c.name]
		switch {
		case !ok:
			t.Errorf("%s: no answer", c.name)
			continue
		case a.Error != "":
			t.Errorf("%s: %s", c.name, a.Error)
			continue
		case len(a.Vectors) != len(c.want):
			t.Errorf("%s: %d vectors, want %d", c.name, len(a.Vectors), len(c.want))
			continue
		}
		for i := range c.want {
			if d := maxDiff(a.Vectors[i], c.want[i]); d > c.tol {
				t.Errorf("%s: vector %d differs by %g (tolerance %g)", c.name, i, d, c.tol)
			}
		}
	}
	if a := got["openai_default"]; a.Model != "qwen3-embed-tiny" || !strings.Contains(string(a.Usage), `"prompt_tokens":`) {
		t.Errorf("openai_default: model %q usage %s: want the served name and usage", a.Model, a.Usage)
	}
	// LangChain's embedQuery sends the text as a document (OpenAI has no
	// query prompt): the same vector as the first document.
	if a := got["langchain_query"]; a.Error != "" || len(a.Vectors) != 1 || maxDiff(a.Vectors[0], all[0]) > 1e-6 {
		t.Errorf("langchain_query: %+v", a.Error)
	}
	if e := got["openai_error"]; e.Status != 400 || e.Param == nil || *e.Param != "input" || e.Type != "invalid_request_error" || !strings.Contains(e.Message, "input must not be empty") {
		t.Errorf("openai_error: the SDK read %+v from an empty input", e)
	}
}
