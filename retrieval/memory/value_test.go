package memory

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestValueJSON: every kind reads back exactly; objects and lists are
// refused; null is no value, dropped by Normalize.
func TestValueJSON(t *testing.T) {
	cases := []struct {
		in   string
		want Value
	}{
		{`"x"`, String("x")}, {`""`, String("")}, {`"5"`, String("5")},
		{`5`, Number(5)}, {`-0.125`, Number(-0.125)}, {`1e308`, Number(1e308)},
		{`9007199254740992`, Number(1 << 53)}, {`5e-324`, Number(5e-324)},
		{`true`, Bool(true)}, {`false`, Bool(false)}, {`null`, Value{}},
	}
	for _, c := range cases {
		var v Value
		if err := json.Unmarshal([]byte(c.in), &v); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if v != c.want {
			t.Errorf("%s: got %v, want %v", c.in, v, c.want)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Value
		if err := json.Unmarshal(b, &back); err != nil || back != v {
			t.Errorf("%s: round trip %s gave %v (%v)", c.in, b, back, err)
		}
	}
	for _, bad := range []string{`{}`, `[1]`, `1e400`, `-1e400`} {
		var v Value
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s accepted as %v", bad, v)
		}
	}
	var m Memory
	if err := json.Unmarshal([]byte(`{"id":"a","namespace":"n","text":"t","time":"2024-01-01T00:00:00Z","metadata":{"a":null,"b":1,"c":"x"},"schema_version":1}`), &m); err != nil {
		t.Fatal(err)
	}
	m = m.Normalize()
	if _, ok := m.Metadata["a"]; ok || len(m.Metadata) != 2 || m.Metadata["b"] != Number(1) {
		t.Errorf("null not dropped: %v", m.Metadata)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

// TestSchemaOneRecord: a record as the build before typed metadata wrote
// it (schema 1, string values) reads unchanged.
func TestSchemaOneRecord(t *testing.T) {
	old := `{"id":"m1","namespace":"alice","text":"Alice moved to Paris","time":"2025-05-01T09:00:00+02:00","source":"chat","metadata":{"kind":"fact","n":"5","t":"true"},"schema_version":1}`
	var m Memory
	if err := json.Unmarshal([]byte(old), &m); err != nil {
		t.Fatal(err)
	}
	want := Strings(map[string]string{"kind": "fact", "n": "5", "t": "true"})
	if len(m.Metadata) != len(want) {
		t.Fatalf("metadata %v", m.Metadata)
	}
	for k, v := range want {
		if m.Metadata[k] != v {
			t.Errorf("%s: %v, want %v", k, m.Metadata[k], v)
		}
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

func TestFromAny(t *testing.T) {
	md, err := FromAny(map[string]any{"s": "x", "n": 2.5, "i": 3, "b": true, "z": nil})
	if err != nil {
		t.Fatal(err)
	}
	if len(md) != 4 || md["i"] != Number(3) || md["b"] != Bool(true) || md["s"] != String("x") {
		t.Errorf("got %v", md)
	}
	_, err = FromAny(map[string]any{"o": map[string]any{}, "l": []any{1}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"o"`) || !strings.Contains(err.Error(), `"l"`) {
		t.Errorf("objects and lists: %v", err)
	}
	back := md.ToAny()
	if back["n"] != 2.5 || back["b"] != true {
		t.Errorf("ToAny: %v", back)
	}
	m := Memory{ID: "a", Namespace: "n", Text: "t", Metadata: Metadata{"x": Number(math.NaN())}}
	if err := m.Validate(); err == nil {
		t.Error("NaN accepted")
	}
}
