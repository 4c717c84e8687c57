package api

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDocument: Document decoding never panics, and a decoded document
// writes out and reads back as the same text and the same other fields, so
// return_documents echoes exactly what the client sent (up to JSON
// whitespace, which encoding/json compacts).
func FuzzDocument(f *testing.F) {
	for _, s := range []string{`"plain"`, `{"text":"t","id":7,"meta":{"a":1}}`, `{"text":""}`, `{"id":1}`,
		`{"text":5}`, `5`, `null`, `["a"]`, ` "x" `, `{"text":"a","text":"b"}`, `{"text":"\ud800\u0000","":null,"Text":1}`,
		`{"text":"a", "nested": [ {"deep": [1, 2, {"x": "y"}]} ] }`, `"\xff\xfe"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var d Document
		if err := json.Unmarshal(in, &d); err != nil {
			return
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("%q decoded but does not encode: %v", in, err)
		}
		var back Document
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q: written %s does not read back: %v", in, out, err)
		}
		if back.Text != d.Text || len(back.Fields) != len(d.Fields) {
			t.Fatalf("%q: round trip %+v, want %+v", in, back, d)
		}
		for k, v := range d.Fields {
			var a, b bytes.Buffer
			if json.Compact(&a, v) != nil || json.Compact(&b, back.Fields[k]) != nil || a.String() != b.String() {
				t.Fatalf("%q: field %q: %s after round trip, want %s", in, k, back.Fields[k], v)
			}
		}
	})
}

// FuzzRerankRequest: request decoding never panics, and whatever decodes
// encodes to a fixed point: encode(decode(encode(r))) == encode(r). The
// style (Cohere documents or TEI texts) survives the trip whenever a
// request has any texts, since the answer's shape depends on it.
func FuzzRerankRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"q","texts":["a","b"],"raw_scores":true}`,
		`{"query":"q","documents":["a",{"text":"b","id":"x"}],"top_n":1,"return_documents":true}`,
		`{"model":"m","query":"q","documents":["a"],"instruction":"i","context":["c1","c2"],"threshold":0.5,"max_tokens_per_doc":3}`,
		`{"query":"q","texts":["a"],"return_text":true,"truncate":false,"truncation_direction":"Left"}`,
		`{"query":"q","texts":[],"documents":null}`,
		`{"query":"q","top_n":-1,"threshold":-0}`,
		`{"QUERY":"q","Documents":["a"]}`,
		`{"query":"q","top_n":1.5}`,
		`{"query":"q","top_n":99999999999999999999}`,
		`{"query":1}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var r RerankRequest
		if err := json.Unmarshal(in, &r); err != nil {
			return
		}
		first, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%q decoded but does not encode: %v", in, err)
		}
		var back RerankRequest
		if err := json.Unmarshal(first, &back); err != nil {
			t.Fatalf("%q: written %s does not read back: %v", in, first, err)
		}
		second, err := json.Marshal(back)
		if err != nil || !bytes.Equal(first, second) {
			t.Fatalf("%q: not a fixed point:\n%s\n%s (%v)", in, first, second, err)
		}
		if len(r.Texts) > 0 && !back.TEIStyle() {
			t.Fatalf("%q: TEI style lost in %s", in, first)
		}
	})
}
