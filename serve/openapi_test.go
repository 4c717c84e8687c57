package serve

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
)

// TestOpenAPIExamples replays every documented request example against the
// real handlers and checks the documented status, error type and response
// shape, so the document cannot drift from the server.
func TestOpenAPIExamples(t *testing.T) {
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Examples map[string]struct {
						Status    int             `json:"x-status"`
						ErrorType string          `json:"x-error-type"`
						Value     json.RawMessage `json:"value"`
					} `json:"examples"`
				} `json:"content"`
			} `json:"requestBody"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI == "" || len(doc.Paths) == 0 {
		t.Fatal("not an OpenAPI document")
	}
	base := start(t, DefaultConfig(), &fakeBackend{})
	checked := 0
	for path, ops := range doc.Paths {
		for method, op := range ops {
			ex := op.RequestBody.Content["application/json"].Examples
			names := make([]string, 0, len(ex))
			for n := range ex {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				e := ex[name]
				r := do(t, strings.ToUpper(method), base+path, "application/json", string(e.Value))
				if r.code != e.Status {
					t.Errorf("%s %s example %q: status %d, documented %d (%s)", method, path, name, r.code, e.Status, r.body)
					continue
				}
				if _, ok := op.Responses[itoa(e.Status)]; !ok {
					t.Errorf("%s %s example %q: status %d is not among the documented responses", method, path, name, e.Status)
				}
				checked++
				if e.Status != 200 {
					checkError(t, r, e.Status, Kind(e.ErrorType))
					continue
				}
				var req api.RerankRequest
				_ = json.Unmarshal(e.Value, &req)
				if req.TEIStyle() {
					var list []api.TEIResult
					decodeInto(t, r, &list)
					if len(list) != len(req.Texts) {
						t.Errorf("example %q: %d TEI results for %d texts", name, len(list), len(req.Texts))
					}
				} else {
					var resp api.RerankResponse
					decodeInto(t, r, &resp)
					if resp.ID == "" || resp.Backend == "" || (req.TopN != nil && len(resp.Results) > *req.TopN) {
						t.Errorf("example %q: response %s", name, r.body)
					}
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d examples checked", checked)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
