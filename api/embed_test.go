package api

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func TestInputs(t *testing.T) {
	for _, tc := range []struct {
		in                 string
		texts              []string
		single, ids, isSet bool
		pairs              int
		bad                bool
	}{
		{in: `"a"`, texts: []string{"a"}, single: true, isSet: true},
		{in: `["a","b"]`, texts: []string{"a", "b"}, isSet: true},
		{in: `[]`, texts: []string{}, isSet: true},
		{in: `null`},
		{in: `[1,2]`, texts: []string{"", ""}, ids: true, isSet: true},
		{in: `[[1,2],[3]]`, texts: []string{"", ""}, ids: true, isSet: true},
		{in: `[["q","d"],"t"]`, texts: []string{"", "t"}, pairs: 1, isSet: true},
		{in: `5`, bad: true},
		{in: `{"a":1}`, bad: true},
		{in: `[{"text":"a"}]`, bad: true},
		{in: `[["a","b","c"]]`, bad: true},
		{in: `[true]`, bad: true},
	} {
		var in Inputs
		err := json.Unmarshal([]byte(tc.in), &in)
		if (err != nil) != tc.bad {
			t.Errorf("%s: error %v", tc.in, err)
			continue
		}
		if tc.bad {
			continue
		}
		if !slices.Equal(in.Texts, tc.texts) || in.Single != tc.single || in.TokenIDs != tc.ids || in.Set != tc.isSet || len(in.Pairs) != tc.pairs {
			t.Errorf("%s: %+v", tc.in, in)
		}
	}
}

func TestVectorBase64(t *testing.T) {
	v := Vector{Values: []float32{1.5, -2, float32(math.Pi), 1e-30}, Base64: true}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `"AADAPwAAAMDbD0lAYEKiDQ=="` /* Python: base64(struct.pack("<4f", ...)) */ {
		t.Errorf("base64 %s", b)
	}
	var back Vector
	if err := json.Unmarshal(b, &back); err != nil || !back.Base64 || !slices.Equal(back.Values, v.Values) {
		t.Errorf("round trip %+v (%v)", back, err)
	}
	for _, bad := range []string{`"AAA="`, `"!!"`, `{}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// FuzzInputs: decoding never panics; what decodes as text writes out and
// reads back as the same texts.
func FuzzInputs(f *testing.F) {
	for _, s := range []string{`"a"`, `["a","b"]`, `[]`, `null`, `[1,2]`, `[[1],[2]]`, `[["q","d"]]`, `[[]]`, `[[""]]`, `5`, `[{"x":1}]`, ` [ "a" , [ "b" , "c" ] ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in Inputs
		if json.Unmarshal(data, &in) != nil || in.TokenIDs || len(in.Pairs) > 0 || !in.Set {
			return
		}
		out, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("%q decoded but does not encode: %v", data, err)
		}
		var back Inputs
		if err := json.Unmarshal(out, &back); err != nil || !slices.Equal(back.Texts, in.Texts) {
			t.Fatalf("%q: round trip %s gave %+v, want %+v (%v)", data, out, back, in, err)
		}
	})
}
