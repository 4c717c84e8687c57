package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDocumentJSON(t *testing.T) {
	cases := []struct {
		in, text, out, err string
	}{
		{`"plain"`, "plain", `{"text":"plain"}`, ""},
		{`{"text":"t","id":7,"meta":{"a":1}}`, "t", `{"id":7,"meta":{"a":1},"text":"t"}`, ""},
		{`{"text":""}`, "", `{"text":""}`, ""},
		{`{"id":1}`, "", "", "no \"text\""},
		{`{"text":5}`, "", "", "\"text\" must be a string, not a JSON number"},
		{`5`, "", "", "string or an object with a \"text\" field, not a JSON number"},
		{`null`, "", "", "not a JSON null"},
		{`["a"]`, "", "", "not a JSON array"},
		{`true`, "", "", "not a JSON boolean"},
	}
	for _, c := range cases {
		var d Document
		err := json.Unmarshal([]byte(c.in), &d)
		if c.err != "" {
			var de *DocumentError
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &de) {
				t.Errorf("%s: err %v (%T), want a *DocumentError with %q", c.in, err, err, c.err)
			}
			continue
		}
		if err != nil || d.Text != c.text {
			t.Errorf("%s: %+v, %v", c.in, d, err)
			continue
		}
		out, err := json.Marshal(d)
		if err != nil || string(out) != c.out {
			t.Errorf("%s: marshal %s, %v; want %s", c.in, out, err, c.out)
		}
	}
}

func TestRequestStyles(t *testing.T) {
	var r RerankRequest
	if err := json.Unmarshal([]byte(`{"query":"q","texts":["a","b"],"raw_scores":true}`), &r); err != nil || !r.TEIStyle() {
		t.Fatalf("TEI request: %+v %v", r, err)
	}
	r = RerankRequest{}
	if err := json.Unmarshal([]byte(`{"query":"q","documents":["a",{"text":"b"}],"top_n":1}`), &r); err != nil || r.TEIStyle() || *r.TopN != 1 || r.Documents[1].Text != "b" {
		t.Fatalf("Cohere request: %+v %v", r, err)
	}
}
