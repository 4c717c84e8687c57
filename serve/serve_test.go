package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerankd/rerankd/api"
	"github.com/rerankd/rerankd/scheduler"
)

const body3 = `{"query":"caroline support group","documents":["melanie painted a sunset",{"text":"Caroline went to the support group","id":"m2"},"caroline called"]}`

func TestRerankCohereStyle(t *testing.T) {
	url := start(t, DefaultConfig(), &fakeBackend{}) + "/rerank"
	cases := []struct {
		name      string
		body      string
		wantIdx   []int
		checkDocs bool
		raw       bool
	}{
		{"sorted by score", body3, []int{1, 2, 0}, false, false},
		{"top_n", `{"query":"caroline support group","documents":["a","caroline support","caroline"],"top_n":2}`, []int{1, 2}, false, false},
		{"threshold before top_n", `{"query":"caroline support group","documents":["a","caroline support","caroline"],"threshold":0.5,"top_n":3}`, []int{1}, false, false},
		{"threshold drops all", `{"query":"x","documents":["a","b"],"threshold":0.99}`, []int{}, false, false},
		{"ties keep input order", `{"query":"zzz","documents":["a","b","c"]}`, []int{0, 1, 2}, false, false},
		{"return documents", body3 + ``, []int{1, 2, 0}, false, false},
		{"raw scores", `{"query":"caroline","documents":["x","caroline"],"raw_scores":true}`, []int{1, 0}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := postJSON(t, url, c.body)
			if r.code != 200 {
				t.Fatalf("status %d: %s", r.code, r.body)
			}
			var resp api.RerankResponse
			decodeInto(t, r, &resp)
			got := []int{}
			for _, x := range resp.Results {
				got = append(got, x.Index)
			}
			if !slices.Equal(got, c.wantIdx) {
				t.Errorf("indexes %v, want %v", got, c.wantIdx)
			}
			for i := 1; i < len(resp.Results); i++ {
				if resp.Results[i].RelevanceScore > resp.Results[i-1].RelevanceScore {
					t.Errorf("not sorted: %+v", resp.Results)
				}
			}
			for _, x := range resp.Results {
				if !c.raw && (x.RelevanceScore <= 0 || x.RelevanceScore >= 1) {
					t.Errorf("score %v outside (0,1)", x.RelevanceScore)
				}
				if c.raw && x.Index == 0 && x.RelevanceScore >= 0 {
					t.Errorf("raw score of a non-matching doc should be a negative logit, got %v", x.RelevanceScore)
				}
			}
			if resp.Backend != "fake" || resp.Model != "fake-model" || resp.ID == "" || resp.Usage.TotalTokens == 0 ||
				resp.Meta.Tokens.InputTokens != resp.Usage.TotalTokens || resp.Meta.BilledUnits.SearchUnits != 1 {
				t.Errorf("envelope: %+v", resp)
			}
			for _, h := range []string{"X-Tokenization-Time", "X-Queue-Time", "X-Inference-Time", "X-Compute-Time"} {
				if r.header.Get(h) == "" {
					t.Errorf("missing header %s", h)
				}
			}
			if r.header.Get("X-Backend") != "fake" {
				t.Errorf("X-Backend %q", r.header.Get("X-Backend"))
			}
		})
	}
	// return_documents echoes documents with their extra fields; the model
	// named is the one that answered, not the request's "model".
	r := postJSON(t, url, strings.Replace(body3, `"query"`, `"return_documents":true,"model":"my-model","query"`, 1))
	var resp api.RerankResponse
	decodeInto(t, r, &resp)
	if resp.Model != "fake-model" || resp.Results[0].Document == nil || resp.Results[0].Document.Text != "Caroline went to the support group" ||
		string(resp.Results[0].Document.Fields["id"]) != `"m2"` {
		t.Errorf("return_documents: %s", r.body)
	}
	for _, p := range []string{"/v1/rerank", "/v2/rerank"} {
		if r := postJSON(t, strings.TrimSuffix(url, "/rerank")+p, body3); r.code != 200 {
			t.Errorf("%s: %d", p, r.code)
		}
	}
}

func TestRerankTEIStyle(t *testing.T) {
	url := start(t, DefaultConfig(), &fakeBackend{}) + "/rerank"
	r := postJSON(t, url, `{"query":"caroline group","texts":["x","caroline group","caroline"],"return_text":true}`)
	if r.code != 200 {
		t.Fatalf("%d %s", r.code, r.body)
	}
	var list []api.TEIResult
	decodeInto(t, r, &list)
	if len(list) != 3 || list[0].Index != 1 || list[0].Text == nil || *list[0].Text != "caroline group" || list[2].Index != 0 {
		t.Errorf("TEI answer %s", r.body)
	}
	r = postJSON(t, url, `{"query":"caroline","texts":["x","caroline"],"raw_scores":true}`)
	list = nil
	decodeInto(t, r, &list)
	if list[0].Score <= 0 || list[1].Score >= 0 || list[0].Text != nil {
		t.Errorf("raw scores %s", r.body)
	}
}

func TestErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxDocuments, cfg.MaxBodyBytes = 3, 2048
	base := start(t, cfg, &fakeBackend{})
	url := base + "/rerank"
	big := `{"query":"q","documents":["` + strings.Repeat("a", 4000) + `"]}`
	cases := []struct {
		name, contentType, body string
		code                    int
		kind                    Kind
	}{
		{"malformed", "application/json", `{"query":`, 400, KindInvalid},
		{"not an object", "application/json", `[1,2]`, 422, KindValidation},
		{"trailing garbage", "application/json", `{"query":"q","documents":["a"]} x`, 400, KindInvalid},
		{"empty body", "application/json", ``, 400, KindInvalid},
		{"empty query", "application/json", `{"query":"","documents":["a"]}`, 400, KindInvalid},
		{"blank query", "application/json", `{"query":" \t\n","documents":["a"]}`, 400, KindInvalid},
		{"missing query", "application/json", `{"documents":["a"]}`, 400, KindInvalid},
		{"query wrong type", "application/json", `{"query":5,"documents":["a"]}`, 422, KindValidation},
		{"top_n wrong type", "application/json", `{"query":"q","documents":["a"],"top_n":"2"}`, 422, KindValidation},
		{"document wrong type", "application/json", `{"query":"q","documents":[5]}`, 422, KindValidation},
		{"negative top_n", "application/json", `{"query":"q","documents":["a"],"top_n":-1}`, 422, KindValidation},
		{"zero top_n", "application/json", `{"query":"q","documents":["a"],"top_n":0}`, 422, KindValidation},
		{"threshold > 1", "application/json", `{"query":"q","documents":["a"],"threshold":1.5}`, 422, KindValidation},
		{"negative max tokens", "application/json", `{"query":"q","documents":["a"],"max_tokens_per_doc":-2}`, 422, KindValidation},
		{"bad direction", "application/json", `{"query":"q","texts":["a"],"truncation_direction":"up"}`, 422, KindValidation},
		{"no documents", "application/json", `{"query":"q","documents":[]}`, 422, KindValidation},
		{"both styles", "application/json", `{"query":"q","documents":["a"],"texts":["b"]}`, 422, KindValidation},
		{"too many documents", "application/json", `{"query":"q","documents":["a","b","c","d"]}`, 422, KindValidation},
		{"body too large", "application/json", big, 413, KindTooLarge},
		{"wrong content type", "text/plain", `{"query":"q","documents":["a"]}`, 415, KindMediaType},
		{"form content type", "application/x-www-form-urlencoded", `query=q`, 415, KindMediaType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, http.MethodPost, url, c.contentType, c.body)
			checkError(t, r, c.code, c.kind)
		})
	}
	checkError(t, do(t, http.MethodGet, base+"/nope", "", ""), 404, KindNotFound)
	checkError(t, do(t, "post", url, "application/json", body3), 405, KindMethod)
	checkError(t, do(t, "BREW", url, "application/json", body3), 405, KindMethod)
	// A method the route lacks is a 405 naming the ones it has (it was a
	// 404 "no route", which told a client the path was wrong).
	r := do(t, http.MethodGet, url, "", "")
	checkError(t, r, 405, KindMethod)
	if got := r.header.Get("Allow"); got != "POST" {
		t.Errorf("Allow %q, want POST", got)
	}
	// The server is still up and answers correctly afterwards.
	if r := postJSON(t, url, body3); r.code != 200 {
		t.Fatalf("after errors: %d %s", r.code, r.body)
	}
}

func checkError(t *testing.T, r response, code int, kind Kind) {
	t.Helper()
	var e api.Error
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" || e.Message != e.Error {
		t.Errorf("status %d body %q: not the JSON error shape, message equal to error (%v)", r.code, r.body, err)
	}
	if r.code != code || e.ErrorType != string(kind) {
		t.Errorf("status %d type %q (%s), want %d %q", r.code, e.ErrorType, e.Error, code, kind)
	}
}

func TestBackendErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RequestTimeout = 200 * time.Millisecond
	cases := []struct {
		name string
		b    *fakeBackend
		code int
		kind Kind
	}{
		{"backend failure", &fakeBackend{err: errors.New("onnx runtime exploded")}, 424, KindBackend},
		{"NaN score", &fakeBackend{nan: true}, 424, KindBackend},
		{"overloaded", &fakeBackend{err: fmt.Errorf("submit: %w", scheduler.ErrOverloaded)}, 429, KindOverloaded},
		{"closing", &fakeBackend{err: scheduler.ErrClosed}, 503, KindNotReady},
		{"timeout", &fakeBackend{block: true}, 504, KindTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := postJSON(t, start(t, cfg, c.b)+"/rerank", body3)
			checkError(t, r, c.code, c.kind)
			if strings.Contains(string(r.body), "exploded") {
				t.Errorf("internal error text leaked: %s", r.body)
			}
			if c.kind == KindOverloaded && r.header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		})
	}
}

func TestAPIKeys(t *testing.T) {
	cfg := DefaultConfig()
	cfg.APIKeys = []string{"first-secret-key", "second-secret-key"}
	base := start(t, cfg, &fakeBackend{})
	cases := []struct {
		name, path, auth string
		code             int
	}{
		{"no header", "/rerank", "", 401},
		{"wrong key", "/rerank", "Bearer wrong-key-0000", 401},
		{"not bearer", "/rerank", "Basic Zmlyc3Qtc2VjcmV0LWtleQ==", 401},
		{"prefix of a key", "/rerank", "Bearer first-secret", 401},
		{"first key", "/rerank", "Bearer first-secret-key", 200},
		{"second key", "/rerank", "Bearer second-secret-key", 200},
		{"scheme in lower case", "/rerank", "bearer first-secret-key", 200},
		{"scheme in upper case", "/rerank", "BEARER first-secret-key", 200},
		{"key without a scheme", "/rerank", "first-secret-key", 401},
		{"scheme without a key", "/rerank", "Bearer", 401},
		{"Bearer as part of another scheme", "/rerank", "Bearerx first-secret-key", 401},
		{"info needs a key", "/info", "", 401},
		{"metrics needs a key", "/metrics", "", 401},
		{"health is open", "/health", "", 200},
		{"ready is open", "/ready", "", 200},
	}
	for _, c := range cases {
		method, body := http.MethodGet, ""
		if c.path == "/rerank" {
			method, body = http.MethodPost, body3
		}
		var hdr []string
		if c.auth != "" {
			hdr = []string{"Authorization", c.auth}
		}
		r := do(t, method, base+c.path, "application/json", body, hdr...)
		if r.code != c.code {
			t.Errorf("%s: %d, want %d (%s)", c.name, r.code, c.code, r.body)
		}
		if c.code == 401 {
			checkError(t, r, 401, KindUnauthorized)
			if r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: no WWW-Authenticate", c.name)
			}
		}
	}
}

func TestInfoHealthMetrics(t *testing.T) {
	b := &fakeBackend{}
	base := start(t, DefaultConfig(), b)
	var info api.Info
	decodeInto(t, do(t, http.MethodGet, base+"/info", "", ""), &info)
	if info.Backend != "fake" || info.MaxDocuments != 1000 || info.MaxTokens != 1024 || info.MaxQueuePairs != 64 || info.MaxBatchTokens != 4096 {
		t.Errorf("info %+v", info)
	}
	if r := do(t, http.MethodGet, base+"/health", "", ""); r.code != 200 {
		t.Errorf("health %d", r.code)
	}
	calls := b.calls.Load()
	do(t, http.MethodGet, base+"/health", "", "")
	if b.calls.Load() != calls {
		t.Error("a fresh health result should be reused, not re-probed")
	}
	postJSON(t, base+"/rerank", body3)
	m := do(t, http.MethodGet, base+"/metrics", "", "")
	for _, want := range []string{`rerankd_requests_total{code="200",route="/rerank"}`, "rerankd_pairs_scored_total", "rerankd_inference_duration_seconds"} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	var doc map[string]any
	decodeInto(t, do(t, http.MethodGet, base+"/openapi.json", "", ""), &doc)
	if doc["openapi"] == nil {
		t.Error("openapi.json has no openapi field")
	}
	// A failing backend makes health 503.
	bad := start(t, DefaultConfig(), &fakeBackend{err: errors.New("down")})
	checkError(t, do(t, http.MethodGet, bad+"/health", "", ""), 503, KindNotReady)
}

// TestConcurrentEqualsSequential: concurrent requests get the answers the
// same requests get one at a time.
func TestConcurrentEqualsSequential(t *testing.T) {
	url := start(t, DefaultConfig(), &fakeBackend{delay: time.Millisecond}) + "/rerank"
	bodies := make([]string, 24)
	want := make([]string, len(bodies))
	strip := func(b []byte) string { // drop the per-request id
		var r api.RerankResponse
		_ = json.Unmarshal(b, &r)
		r.ID = ""
		out, _ := json.Marshal(r)
		return string(out)
	}
	for i := range bodies {
		bodies[i] = fmt.Sprintf(`{"query":"caroline group %d","documents":["caroline","group %d","x","caroline group"],"top_n":%d}`, i, i, 1+i%4)
		want[i] = strip(postJSON(t, url, bodies[i]).body)
	}
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := strip(postJSON(t, url, bodies[i]).body); got != want[i] {
				t.Errorf("request %d: concurrent %s != sequential %s", i, got, want[i])
			}
		}()
	}
	wg.Wait()
}
