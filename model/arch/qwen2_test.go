package arch

import (
	"encoding/json"
	"strings"
	"testing"
)

// qwen25Config is a Qwen2.5-0.5B config.json as mixedbread-ai/mxbai-
// rerank-base-v2 ships it (from memory of the published file: no head_dim,
// sliding_window 32768 with use_sliding_window false).
const qwen25Config = `{"architectures":["Qwen2ForCausalLM"],"attention_dropout":0.0,"bos_token_id":151643,"eos_token_id":151645,"hidden_act":"silu","hidden_size":896,"initializer_range":0.02,"intermediate_size":4864,"max_position_embeddings":32768,"max_window_layers":24,"model_type":"qwen2","num_attention_heads":14,"num_hidden_layers":24,"num_key_value_heads":2,"rms_norm_eps":1e-06,"rope_scaling":null,"rope_theta":1000000.0,"sliding_window":32768,"tie_word_embeddings":true,"torch_dtype":"bfloat16","transformers_version":"4.43.1","use_cache":true,"use_sliding_window":false,"vocab_size":151936}`

// TestQwen2Config: Qwen2 configs load as the qwen2 family (q/k/v biases,
// no q/k norms, head_dim from hidden/heads), equal to MxbaiRerankBaseV2;
// mismatched families and other model types are refused by name.
func TestQwen2Config(t *testing.T) {
	with := func(fields map[string]string) []byte {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(qwen25Config), &m); err != nil {
			t.Fatal(err)
		}
		for k, v := range fields {
			if v == "" {
				delete(m, k)
			} else {
				m[k] = json.RawMessage(v)
			}
		}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, tc := range []struct {
		name   string
		fields map[string]string
		family string
		warns  []string
		errs   []string
	}{
		{"Qwen2.5 causal LM", nil, FamilyQwen2, nil, nil},
		{"sequence classification", map[string]string{"architectures": `["Qwen2ForSequenceClassification"]`, "id2label": `{"0":"LABEL_0"}`}, FamilyQwen2, nil, nil},
		{"family from architectures", map[string]string{"model_type": ""}, FamilyQwen2, nil, nil},
		{"untied 7B-style", map[string]string{"tie_word_embeddings": `false`}, FamilyQwen2, nil, nil},
		{"attention_bias is not Qwen2's", map[string]string{"attention_bias": `true`}, FamilyQwen2, []string{"attention_bias", "Qwen2 does not read it"}, nil},
		{"qwen3 type, qwen2 class", map[string]string{"model_type": `"qwen3"`}, "", nil, []string{"Qwen2ForCausalLM", "qwen2 model", `model_type is "qwen3"`}},
		{"qwen2 type, qwen3 class", map[string]string{"architectures": `["Qwen3ForCausalLM"]`}, "", nil, []string{"Qwen3ForCausalLM", `model_type is "qwen2"`}},
		{"llama", map[string]string{"model_type": `"llama"`}, "", nil, []string{`model_type "llama"`, "qwen3 and qwen2"}},
		{"no rope_theta", map[string]string{"rope_theta": ""}, "", nil, []string{"rope_theta"}},
		{"binding sliding window", map[string]string{"use_sliding_window": `true`, "sliding_window": `4096`, "max_window_layers": `21`}, "", nil, []string{"use_sliding_window true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, warns, err := ParseConfig(with(tc.fields))
			if len(tc.errs) > 0 {
				for _, w := range tc.errs {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("err %v, want it to name %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != min(len(tc.warns), 1) {
				t.Errorf("warnings %q, want one naming %q", warns, tc.warns)
			}
			for _, w := range tc.warns {
				if len(warns) == 0 || !strings.Contains(warns[0], w) {
					t.Errorf("warnings %q, want one naming %q", warns, w)
				}
			}
			if c.Family() != tc.family || c.QKNorm() || !c.QKVBias() || c.HeadDim != 64 || c.RopeTheta != 1e6 {
				t.Errorf("%+v: family %s, qk norm %v, bias %v", c, c.Family(), c.QKNorm(), c.QKVBias())
			}
			s := c.Shapes()
			if _, ok := s[LayerTensor(0, QNorm)]; ok {
				t.Error("Qwen2 shapes list q_norm")
			}
			for name, want := range map[string]int{QBias: 14 * 64, KBias: 2 * 64, VBias: 2 * 64} {
				if got := s[LayerTensor(23, name)]; len(got) != 1 || got[0] != want {
					t.Errorf("%s shape %v, want [%d]", name, got, want)
				}
			}
			if _, ok := s[LayerTensor(0, "self_attn.o_proj.bias")]; ok {
				t.Error("o_proj has a bias")
			}
		})
	}

	c, _, err := ParseConfig([]byte(qwen25Config))
	if err != nil {
		t.Fatal(err)
	}
	want := MxbaiRerankBaseV2()
	want.MaxPositionEmbeddings = c.MaxPositionEmbeddings
	got, err1 := json.Marshal(c)
	wantJSON, err2 := json.Marshal(want)
	if err1 != nil || err2 != nil || string(got) != string(wantJSON) {
		t.Errorf("parsed %s\nwant      %s", got, wantJSON)
	}
	// Qwen2.5-0.5B's published size: 494,032,768 parameters, tied.
	if p := want.Params(); p != 494032768 {
		t.Errorf("MxbaiRerankBaseV2 params %d, want 494032768", p)
	}
	// A Qwen3 config still has norms and no biases.
	if q := Tiny(); !q.QKNorm() || q.QKVBias() || q.Family() != FamilyQwen3 {
		t.Errorf("Tiny: family %s norm %v bias %v", q.Family(), q.QKNorm(), q.QKVBias())
	}
}

// TestQwen2Random: random Qwen2 weights pass Check with biases that are
// not gains (centred on 0) and no q/k norms; dropping a bias fails Check
// naming it.
func TestQwen2Random(t *testing.T) {
	w, err := Random(Qwen2Tiny(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Check(); err != nil {
		t.Fatal(err)
	}
	var sum float64
	b := w.Tensors[LayerTensor(1, KBias)].Data
	for _, v := range b {
		sum += float64(v)
	}
	if mean := sum / float64(len(b)); mean > 0.3 || mean < -0.3 {
		t.Errorf("k bias mean %v: want centred on 0", mean)
	}
	delete(w.Tensors, LayerTensor(1, VBias))
	if err := w.Check(); err == nil || !strings.Contains(err.Error(), "model.layers.1.self_attn.v_proj.bias") {
		t.Errorf("Check = %v, want the missing v bias named", err)
	}
}
