package serve

import (
	"strings"
	"testing"

	"github.com/rerankd/rerankd/api"
)

// TestStrictSuggestions checks that an unknown field is named, with the
// closest known field suggested where one is close.
func TestStrictSuggestions(t *testing.T) {
	cases := []struct {
		name, body, want, not string
	}{
		{"typo", `{"query":"q","treshold":0.9}`, `unknown field "treshold": did you mean "threshold"?`, ""},
		{"mem0 limit", `{"query":"q","limit":3}`, `unknown field "limit": did you mean "top_k"?`, ""},
		{"mem0 user_id", `{"query":"q","user_id":"u"}`, `did you mean "namespace"?`, ""},
		{"nested typo", `{"query":"q","recency":{"wieght":0.2}}`, `unknown field "wieght": did you mean "weight"?`, ""},
		{"nothing close", `{"query":"q","zzzzzzzz":1}`, `unknown field "zzzzzzzz"`, "did you mean"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeStrictBody[api.SearchRequest]([]byte(c.body))
			if err == nil {
				t.Fatal("accepted")
			}
			e := classify(err)
			if e.Kind != KindInvalid || !strings.Contains(e.Msg, c.want) {
				t.Errorf("got %s %q, want invalid_request containing %q", e.Kind, e.Msg, c.want)
			}
			if c.not != "" && strings.Contains(e.Msg, c.not) {
				t.Errorf("%q should not contain %q", e.Msg, c.not)
			}
		})
	}
	// content -> text on a memory.
	_, err := decodeStrictBody[api.AddMemoriesRequest]([]byte(`{"namespace":"a","content":"x"}`))
	if err == nil || !strings.Contains(err.Error(), `did you mean "text"?`) {
		t.Errorf("content: %v", err)
	}
	// Valid input and trailing data.
	if _, err := decodeStrictBody[api.SearchRequest]([]byte(`{"query":"q","top_k":3}`)); err != nil {
		t.Errorf("valid body refused: %v", err)
	}
	if _, err := decodeStrictBody[api.SearchRequest]([]byte(`{"query":"q"}{"query":"q"}`)); err == nil || classify(err).Kind != KindInvalid {
		t.Errorf("two objects: %v", err)
	}
	if _, err := decodeStrictBody[api.SearchRequest]([]byte(`{"query":5}`)); err == nil || classify(err).Kind != KindValidation {
		t.Errorf("wrong type: %v", err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"treshold", "threshold", 1}, {"", "ab", 2}, {"ab", "ba", 1}, {"top_k", "top_k", 0}, {"kitten", "sitting", 3}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
