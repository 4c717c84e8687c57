package arch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// realQwen3Reranker is Qwen/Qwen3-Reranker-0.6B's config.json as published.
const realQwen3Reranker = `{"architectures":["Qwen3ForCausalLM"],"attention_bias":false,"attention_dropout":0.0,"bos_token_id":151643,"eos_token_id":151645,"head_dim":128,"hidden_act":"silu","hidden_size":1024,"initializer_range":0.02,"intermediate_size":3072,"max_position_embeddings":40960,"max_window_layers":28,"model_type":"qwen3","num_attention_heads":16,"num_hidden_layers":28,"num_key_value_heads":8,"rms_norm_eps":1e-06,"rope_scaling":null,"rope_theta":1000000,"sliding_window":null,"tie_word_embeddings":true,"torch_dtype":"float32","transformers_version":"4.51.0","use_cache":true,"use_sliding_window":false,"vocab_size":151669}`

// withFields returns the real config.json with the given keys set to raw
// JSON values ("" deletes the key).
func withFields(t testing.TB, fields map[string]string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(realQwen3Reranker), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		if v == "" {
			delete(m, k)
			continue
		}
		m[k] = json.RawMessage(v)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// configCase is one config.json variation: fields changed from the real
// Qwen3-Reranker config, and the substrings the error must contain (none:
// it must load).
type configCase struct {
	name   string
	fields map[string]string
	errs   []string
}

// configCases lists, per field that changes the computation, values that
// mean the default (accepted) and values rerankd does not implement
// (refused, naming the field and the value).
var configCases = []configCase{
	{"real", nil, nil},

	// rope_scaling: plain RoPE only.
	{"rope_scaling absent", map[string]string{"rope_scaling": ""}, nil},
	{"rope_scaling default", map[string]string{"rope_scaling": `{"rope_type":"default"}`}, nil},
	{"rope_scaling default legacy", map[string]string{"rope_scaling": `{"type":"default"}`}, nil},
	{"rope_scaling yarn", map[string]string{"rope_scaling": `{"type":"yarn","factor":4.0,"original_max_position_embeddings":32768}`},
		[]string{"rope_scaling", `"yarn"`, "not supported", "plain RoPE"}},
	{"rope_scaling linear", map[string]string{"rope_scaling": `{"rope_type":"linear","factor":2}`}, []string{"rope_scaling", "linear"}},
	{"rope_scaling dynamic", map[string]string{"rope_scaling": `{"rope_type":"dynamic","factor":2}`}, []string{"rope_scaling", "dynamic"}},
	{"rope_scaling llama3", map[string]string{"rope_scaling": `{"rope_type":"llama3","factor":8}`}, []string{"rope_scaling", "llama3"}},
	{"rope_scaling longrope", map[string]string{"rope_scaling": `{"rope_type":"longrope","short_factor":[1],"long_factor":[2]}`}, []string{"rope_scaling", "longrope"}},
	{"rope_scaling default with factor", map[string]string{"rope_scaling": `{"rope_type":"default","factor":2}`}, []string{"rope_scaling", "factor"}},
	{"rope_scaling empty", map[string]string{"rope_scaling": `{}`}, []string{"rope_scaling {}"}},
	{"rope_scaling string", map[string]string{"rope_scaling": `"yarn"`}, []string{"rope_scaling", "yarn"}},

	// rope_parameters (transformers 5 layout, rope_theta inside).
	{"rope_parameters default", map[string]string{"rope_parameters": `{"rope_type":"default","rope_theta":1000000}`, "rope_theta": ""}, nil},
	{"rope_parameters same theta", map[string]string{"rope_parameters": `{"rope_type":"default","rope_theta":1000000}`}, nil},
	{"rope_parameters other theta", map[string]string{"rope_parameters": `{"rope_type":"default","rope_theta":10000}`}, []string{"rope_parameters", "rope_theta"}},
	{"rope_parameters yarn", map[string]string{"rope_parameters": `{"rope_type":"yarn","rope_theta":1000000,"factor":4}`}, []string{"rope_parameters", "yarn", "plain RoPE"}},
	{"partial_rotary_factor 1", map[string]string{"partial_rotary_factor": `1.0`}, nil},
	{"partial_rotary_factor 0.5", map[string]string{"partial_rotary_factor": `0.5`}, []string{"partial_rotary_factor 0.5"}},

	// attention_bias: no bias terms.
	{"attention_bias absent", map[string]string{"attention_bias": ""}, nil},
	{"attention_bias true", map[string]string{"attention_bias": `true`}, []string{"attention_bias true", "not supported"}},
	{"attention_bias string", map[string]string{"attention_bias": `"false"`}, []string{"attention_bias", `"false"`}},

	// hidden_act: SiLU only (transformers spells it silu or swish).
	{"hidden_act absent", map[string]string{"hidden_act": ""}, nil},
	{"hidden_act swish", map[string]string{"hidden_act": `"swish"`}, nil},
	{"hidden_act gelu", map[string]string{"hidden_act": `"gelu"`}, []string{`hidden_act "gelu"`, "not supported"}},
	{"hidden_act relu", map[string]string{"hidden_act": `"relu"`}, []string{`hidden_act "relu"`}},

	// Sliding-window attention: only where it cannot bind.
	{"use_sliding_window absent", map[string]string{"use_sliding_window": ""}, nil},
	{"sliding_window set, off", map[string]string{"sliding_window": `4096`}, nil},
	{"sliding window on, no window", map[string]string{"use_sliding_window": `true`, "sliding_window": `null`}, nil},
	{"sliding window on, no layer slides", map[string]string{"use_sliding_window": `true`, "sliding_window": `4096`, "max_window_layers": `28`}, nil},
	{"sliding window on, window covers positions", map[string]string{"use_sliding_window": `true`, "sliding_window": `40960`, "max_window_layers": `0`}, nil},
	{"sliding window on, binding", map[string]string{"use_sliding_window": `true`, "sliding_window": `4096`, "max_window_layers": `21`},
		[]string{"use_sliding_window true", "sliding_window 4096", "max_window_layers 21", "not supported"}},
	// transformers' defaults when the keys are absent: window 4096, all
	// layers from 28 on, 32768 positions.
	{"sliding window on, default window", map[string]string{"use_sliding_window": `true`, "sliding_window": "", "max_window_layers": `0`, "max_position_embeddings": ""},
		[]string{"use_sliding_window true", "sliding_window 4096"}},
	{"use_sliding_window string", map[string]string{"use_sliding_window": `"no"`}, []string{"use_sliding_window", `"no"`}},
	{"sliding_window string", map[string]string{"use_sliding_window": `true`, "max_window_layers": `0`, "sliding_window": `"big"`}, []string{"sliding_window", `"big"`}},

	// layer_types: full attention only.
	{"layer_types full", map[string]string{"layer_types": `[` + strings.Repeat(`"full_attention",`, 27) + `"full_attention"]`}, nil},
	{"layer_types sliding", map[string]string{"layer_types": `[` + strings.Repeat(`"full_attention",`, 26) + `"sliding_attention","sliding_attention"]`},
		[]string{"layer_types", `"sliding_attention"`, "26", "27"}},
	{"layer_types short", map[string]string{"layer_types": `["full_attention"]`}, []string{"layer_types", "1 entries", "28"}},
	{"layer_types not strings", map[string]string{"layer_types": `[1,2]`}, []string{"layer_types"}},

	// Harmless at inference whatever the value.
	{"attention_dropout nonzero", map[string]string{"attention_dropout": `0.1`}, nil},
	{"transformers 5 keys", map[string]string{"dtype": `"bfloat16"`, "torch_dtype": "", "pad_token_id": `null`}, nil},

	// Weights rerankd cannot read as plain floats.
	{"quantization_config", map[string]string{"quantization_config": `{"quant_method":"fp8","weight_block_size":[128,128]}`},
		[]string{"quantization_config", "fp8", "not supported"}},
	{"quantization_config null", map[string]string{"quantization_config": `null`}, nil},

	// Every problem at once.
	{"several", map[string]string{"rope_scaling": `{"rope_type":"yarn","factor":4}`, "attention_bias": `true`, "hidden_act": `"gelu"`, "hidden_size": `0`},
		[]string{"rope_scaling", "attention_bias", "hidden_act", "hidden_size"}},
}

// TestReadConfigFields: each config.json field that changes the
// computation loads with its default values and is refused, named with
// its value, otherwise.
func TestReadConfigFields(t *testing.T) {
	dir := t.TempDir()
	for _, c := range configCases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
			if err := os.WriteFile(p, withFields(t, c.fields), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadConfig(p)
			if len(c.errs) == 0 {
				if err != nil {
					t.Fatalf("ReadConfig: %v, want it to load", err)
				}
				if got.HiddenSize != 1024 || got.RopeTheta != 1e6 || got.NumHiddenLayers != 28 {
					t.Errorf("loaded %+v", got)
				}
				return
			}
			if err == nil {
				t.Fatalf("ReadConfig loaded %v; want an error mentioning %q", c.fields, c.errs)
			}
			for _, want := range c.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestParseConfigWarnings: the real config.json and rerankd's own
// config.json load without warnings; unknown keys are each listed, sorted,
// and do not stop the load.
func TestParseConfigWarnings(t *testing.T) {
	written, err := json.Marshal(Tiny())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"real": []byte(realQwen3Reranker), "WriteConfig": written} {
		if _, warns, err := ParseConfig(data); err != nil || len(warns) != 0 {
			t.Errorf("%s: warnings %q, error %v; want none", name, warns, err)
		}
	}
	data := withFields(t, map[string]string{"zz_top": `1`, "mlp_bias": `true`, "pad_token_id": `151643`, "_name_or_path": `"x"`})
	c, warns, err := ParseConfig(data)
	if err != nil || c.HiddenSize != 1024 {
		t.Fatalf("unknown keys: %+v, %v; want the config loaded", c, err)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], `"mlp_bias"`) || !strings.Contains(warns[1], `"zz_top"`) {
		t.Errorf("warnings %q, want mlp_bias then zz_top", warns)
	}
	// Every key is in one class only.
	for k := range HarmlessKeys {
		if usedKeys[k] || slices.Contains(checkedKeys, k) {
			t.Errorf("harmless key %s is also used or checked", k)
		}
	}
	for _, k := range checkedKeys {
		if usedKeys[k] {
			t.Errorf("checked key %s is also a Config field", k)
		}
	}
}

// FuzzParseConfig: ParseConfig never panics, and a config it accepts
// survives WriteConfig's encoding: it loads again, equal and without
// warnings (so a converted folder's config.json never warns).
func FuzzParseConfig(f *testing.F) {
	for _, c := range configCases {
		f.Add(withFields(f, c.fields))
	}
	f.Add(withFields(f, map[string]string{"architectures": `[]`}))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"rope_scaling":{"rope_type":"default"},"layer_types":[]}`))
	f.Fuzz(checkParseConfig)
}

func checkParseConfig(t *testing.T, data []byte) {
	c, _, err := ParseConfig(data)
	if err != nil {
		return
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("accepted an invalid config: %v", err)
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	again, warns, err := ParseConfig(out)
	if len(c.Architectures) == 0 {
		c.Architectures = nil // omitempty: [] is written as nothing
	}
	if err != nil || len(warns) != 0 || !reflect.DeepEqual(again, c) {
		t.Fatalf("round trip of %s: %+v, %q, %v; want %+v", out, again, warns, err, c)
	}
}

// TestReadConfigInfo: sizes only; keys that change the computation are
// not judged, malformed sizes still are.
func TestReadConfigInfo(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		fields map[string]string
		ok     bool
	}{
		"yarn":        {map[string]string{"rope_scaling": `{"rope_type":"yarn","factor":4}`, "hidden_act": `"gelu"`}, true},
		"bad size":    {map[string]string{"hidden_size": `"big"`}, false},
		"no vocab":    {map[string]string{"vocab_size": ""}, false},
		"unknown key": {map[string]string{"zz": `1`}, true},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(p, withFields(t, c.fields), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadConfigInfo(p)
		if c.ok && (err != nil || got.HiddenSize != 1024) {
			t.Errorf("%s: %+v, %v; want it to load", name, got, err)
		}
		if !c.ok && err == nil {
			t.Errorf("%s: loaded; want an error", name)
		}
	}
}
