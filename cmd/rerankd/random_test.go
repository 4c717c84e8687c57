package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/internal/testenv"
	"github.com/rerankd/rerankd/internal/tokentest"
	"github.com/rerankd/rerankd/model/folder"
)

// TestRandomWeightsMarked: folders from rerankd-bench testmodel (a
// reranker written directly, an embedding model converted from a
// generated XLM-R checkpoint) carry the random-weights marker, and serve
// says so loudly: a WARN log line and a notice for each model, and /info's
// random_weights with a warning per model. The same folders without the
// marker are served without a word.
func TestRandomWeightsMarked(t *testing.T) {
	testenv.Require(t, testenv.ORTLib())
	reranker := filepath.Join(t.TempDir(), "rr")
	if code, _, errs := runCLI(t, "testmodel", "--out", reranker); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	_, xlmr := embedFolders(t)
	for _, dir := range []string{reranker, xlmr} {
		if random, err := folder.RandomWeights(dir); err != nil || !random {
			t.Fatalf("%s: marked %v, %v; want the random-weights marker", dir, random, err)
		}
	}
	for _, marked := range []bool{true, false} {
		if !marked {
			for _, dir := range []string{reranker, xlmr} {
				if err := os.Remove(filepath.Join(dir, folder.MarkerFile)); err != nil {
					t.Fatal(err)
				}
			}
		}
		var logs, notices bytes.Buffer
		built := buildServe(t, func(c *app.Config) {
			c.Tuning.EncoderTokenizer = tokentest.FakeXLMR(100)
			c.Log, c.Notices = slog.New(slog.NewTextHandler(&logs, nil)), &notices
		}, "--model", reranker, "--embed-model", xlmr, "--threads", "1", "--store", "none", "--ort-lib", testenv.ORTLib())
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = built.Server.Serve(ln) }()
		resp, err := http.Get("http://" + ln.Addr().String() + "/info")
		if err != nil {
			t.Fatal(err)
		}
		var inf api.Info
		err = json.NewDecoder(resp.Body).Decode(&inf)
		_ = resp.Body.Close()
		_ = built.Shutdown(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Count(logs.String(), "RANDOM WEIGHTS")
		noticed := strings.Count(notices.String(), "RANDOM WEIGHTS")
		infoWarned := strings.Count(strings.Join(inf.Warnings, "\n"), "RANDOM WEIGHTS")
		embRandom := inf.Embedder != nil && inf.Embedder.RandomWeights
		if marked && (warned != 2 || noticed != 2 || infoWarned != 2 || !inf.RandomWeights || !embRandom) {
			t.Errorf("marked: log %d, notices %d, /info warnings %d (%q), random_weights %v, embedder %v; want each model named everywhere",
				warned, noticed, infoWarned, inf.Warnings, inf.RandomWeights, embRandom)
		}
		if !marked && (warned+noticed+infoWarned != 0 || inf.RandomWeights || embRandom) {
			t.Errorf("unmarked: log %d, notices %d, /info %q random %v/%v; want no word", warned, noticed, inf.Warnings, inf.RandomWeights, embRandom)
		}
	}
}
