package arch

import (
	"encoding/json"
	"strings"
	"testing"
)

// encoderJSON is a valid BERT cross-encoder config.json with edit applied
// (keys set to the given raw JSON, or removed when the value is "").
func encoderJSON(t *testing.T, base EncoderConfig, edit map[string]string) []byte {
	t.Helper()
	data, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range edit {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = json.RawMessage(v)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseEncoderConfig(t *testing.T) {
	cases := []struct {
		name    string
		base    EncoderConfig
		edit    map[string]string
		wantErr []string // substrings, all required; none: must load
		check   func(EncoderConfig) bool
	}{
		{name: "minilm", base: MiniLML6(), check: func(c EncoderConfig) bool { return c.MaxTokens() == 512 && c.PositionOffset() == 0 }},
		{name: "bge-v2-m3", base: BGERerankerV2M3(), check: func(c EncoderConfig) bool { return c.MaxTokens() == 8192 && c.PositionOffset() == 2 }},
		{name: "defaults", base: MiniLML6(), edit: map[string]string{"hidden_act": "", "layer_norm_eps": "", "type_vocab_size": "", "position_embedding_type": ""},
			check: func(c EncoderConfig) bool {
				return c.HiddenAct == "gelu" && c.LayerNormEps == 1e-12 && c.TypeVocabSize == 2 && c.PositionEmbeddingType == "absolute"
			}},
		{name: "xlmr pad default", base: XLMRBase(), edit: map[string]string{"pad_token_id": ""}, check: func(c EncoderConfig) bool { return c.PadID() == 1 }},
		{name: "num_labels fills id2label", base: MiniLML6(), edit: map[string]string{"id2label": "", "num_labels": "1"}, check: func(c EncoderConfig) bool { return c.NumLabels() == 1 }},
		{name: "identity", base: MiniLML6(), edit: map[string]string{"sbert_ce_default_activation_function": `"torch.nn.modules.linear.Identity"`},
			check: func(c EncoderConfig) bool { a, _ := c.ScoreActivation(); return a == ActIdentity }},
		{name: "relative positions", base: MiniLML6(), edit: map[string]string{"position_embedding_type": `"relative_key_query"`}, wantErr: []string{"position_embedding_type", "relative_key_query"}},
		{name: "hidden_act", base: XLMRBase(), edit: map[string]string{"hidden_act": `"mish"`}, wantErr: []string{"hidden_act", "mish"}},
		{name: "remote code", base: XLMRBase(), edit: map[string]string{"auto_map": `{"AutoModel":"acme/x--modeling.M"}`}, wantErr: []string{"auto_map", "trust_remote_code"}},
		{name: "jina v2", base: XLMRBase(), edit: map[string]string{"auto_map": `{"AutoConfig":"jinaai/jina-reranker-v2-base-multilingual--configuration_xlm_roberta.XLMRobertaFlashConfig"}`}, wantErr: []string{"jina-reranker-v2"}},
		{name: "decoder", base: MiniLML6(), edit: map[string]string{"is_decoder": "true"}, wantErr: []string{"is_decoder"}},
		{name: "family mismatch", base: MiniLML6(), edit: map[string]string{"model_type": `"xlm-roberta"`}, wantErr: []string{"BertForSequenceClassification", "xlm-roberta"}},
		{name: "unknown arch", base: MiniLML6(), edit: map[string]string{"architectures": `["BertForMaskedLM"]`}, wantErr: []string{"BertForMaskedLM"}},
		{name: "every problem", base: MiniLML6(), edit: map[string]string{"hidden_size": "30", "hidden_act": `"mish"`, "num_labels": "3"},
			wantErr: []string{"multiple of num_attention_heads", "mish", "num_labels 3"}},
		{name: "three labels", base: MiniLML6(), edit: map[string]string{"id2label": `{"0":"a","1":"b","2":"c"}`}, wantErr: []string{"3 labels"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, warns, err := ParseEncoderConfig(encoderJSON(t, c.base, c.edit))
			if len(c.wantErr) > 0 {
				for _, w := range c.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v, want it to mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) > 0 {
				t.Errorf("warnings %v for a config of honoured keys", warns)
			}
			if !c.check(got) {
				t.Errorf("parsed %+v", got)
			}
		})
	}
}

func TestParseEncoderConfigWarnsUnknown(t *testing.T) {
	_, warns, err := ParseEncoderConfig(encoderJSON(t, MiniLML6(), map[string]string{"hidden_dropout_prob": "0.1", "frobnicate": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "frobnicate") {
		t.Errorf("warnings %v, want one naming frobnicate", warns)
	}
}

func TestEncoderShapes(t *testing.T) {
	cases := []struct {
		cfg          EncoderConfig
		has, hasNot  []string
		paramsMillon [2]float64
	}{
		{MiniLML6(), []string{EncPoolerWeight, EncClassifierW}, []string{EncHeadOutWeight}, [2]float64{22, 23.5}},
		{BGERerankerV2M3(), []string{EncHeadDenseWeight, EncHeadOutBias}, []string{EncPoolerWeight}, [2]float64{565, 570}},
		{TinyEncoder(FamilyXLMR, true), nil, []string{EncPoolerWeight, EncHeadOutWeight}, [2]float64{0, 1}},
	}
	for _, c := range cases {
		s := c.cfg.Shapes()
		for _, n := range c.has {
			if _, ok := s[n]; !ok {
				t.Errorf("%v: no %s", c.cfg.Architectures, n)
			}
		}
		for _, n := range c.hasNot {
			if _, ok := s[n]; ok {
				t.Errorf("%v: unexpected %s", c.cfg.Architectures, n)
			}
		}
		if p := float64(c.cfg.Params()) / 1e6; p < c.paramsMillon[0] || p > c.paramsMillon[1] {
			t.Errorf("%v: %.1fM parameters, want %v", c.cfg.Architectures, p, c.paramsMillon)
		}
	}
}

func TestScoreRowFolds(t *testing.T) {
	c := TinyEncoder(FamilyXLMR, false)
	c.ID2Label = map[string]string{"0": "no", "1": "yes"}
	w, err := RandomEncoder(c, 3)
	if err != nil {
		t.Fatal(err)
	}
	row, bias, err := w.ScoreRow()
	if err != nil {
		t.Fatal(err)
	}
	wt, bt := w.ClassifierHead()
	h := c.HiddenSize
	if got, want := row[5], wt.Data[h+5]-wt.Data[5]; got != want {
		t.Errorf("row[5] = %v, want %v", got, want)
	}
	if want := bt.Data[1] - bt.Data[0]; bias != want {
		t.Errorf("bias %v, want %v", bias, want)
	}
}
