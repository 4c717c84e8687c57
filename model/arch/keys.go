package arch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file accounts for every config.json key (the package doc states the
// contract). rerankd computes one thing, transformers' Qwen3 with plain
// RoPE, no biases, SiLU and full causal attention; a config asking for
// anything else must be refused, never approximated, or the converted
// model would score differently from the checkpoint it came from.

// usedKeys are the JSON names of Config's fields: the keys rerankd reads.
var usedKeys = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}()

// HarmlessKeys are config.json keys that transformers reads or keeps but
// that cannot change a forward pass in inference mode, with the reason.
// They are ignored whatever their value.
var HarmlessKeys = map[string]string{
	"_name_or_path":        "provenance",
	"transformers_version": "provenance",
	"attention_dropout":    "dropout is off at inference",
	"bos_token_id":         "generation only",
	"eos_token_id":         "generation only",
	"problem_type":         "selects a training loss of *ForSequenceClassification only",
	"use_cache":            "a generation speed-up that gives the same numbers",
	"initializer_range":    "initialises weights, which are then loaded",
	"dtype":                "the storage type (transformers 5's torch_dtype); rerankd computes in float32",
}

// Transformers' Qwen3Config defaults for the keys the sliding-window rule
// reads, applied when a key is absent (not when it is null).
const (
	defaultSlidingWindow         = 4096
	defaultMaxWindowLayers       = 28
	defaultMaxPositionEmbeddings = 32768
)

// checkedKeys are the keys that change the computation unless their value
// means the default; checkKeys judges each.
var checkedKeys = []string{
	"rope_scaling", "rope_parameters", "partial_rotary_factor", "attention_bias", "hidden_act",
	"use_sliding_window", "sliding_window", "max_window_layers", "layer_types", "quantization_config",
}

// checkKeys judges the keys of a config.json beyond Config's fields: an
// error for each that asks for a computation rerankd does not implement,
// a warning for each it does not know. It may fill c.RopeTheta from
// rope_parameters (transformers 5 keeps it there).
func checkKeys(c *Config, keys map[string]json.RawMessage) (warns []string, errs []error) {
	refuse := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	present := func(k string) (json.RawMessage, bool) {
		v, ok := keys[k]
		return v, ok && !isNull(v)
	}

	// RoPE: plain rotary embeddings over all of head_dim only. transformers
	// picks the frequencies by rope_type (ROPE_INIT_FUNCTIONS: linear,
	// dynamic, yarn, longrope, llama3 rescale them).
	if v, ok := present("rope_scaling"); ok && !defaultRope(v, false) {
		refuse("rope_scaling %s is not supported (rerankd implements plain RoPE only)", short(v))
	}
	if v, ok := present("rope_parameters"); ok {
		if !defaultRope(v, true) {
			refuse("rope_parameters %s is not supported (rerankd implements plain RoPE only)", short(v))
		} else if theta, ok := ropeTheta(v); ok {
			if _, top := keys["rope_theta"]; !top {
				c.RopeTheta = theta
			} else if theta != c.RopeTheta {
				refuse("rope_theta %v and rope_parameters rope_theta %v disagree", c.RopeTheta, theta)
			}
		}
	}
	// The default RoPE init reads partial_rotary_factor when a config has
	// one, rotating only that fraction of head_dim.
	if v, ok := keys["partial_rotary_factor"]; ok {
		if f, isNum := number(v); !isNum || f != 1 {
			refuse("partial_rotary_factor %s is not supported (rerankd rotates all of head_dim)", short(v))
		}
	}

	// attention_bias adds learned biases to q_proj, k_proj, v_proj and
	// o_proj; null is falsy in Python, as absent is.
	if v, ok := present("attention_bias"); ok && c.Family() == FamilyQwen2 {
		warns = append(warns, fmt.Sprintf("config.json key %q ignored: transformers' Qwen2 does not read it (q/k/v projections always have biases, o_proj none)", "attention_bias"))
	} else if ok {
		switch b, isBool := boolean(v); {
		case !isBool:
			refuse("attention_bias %s: want true or false", short(v))
		case b:
			refuse("attention_bias true is not supported (rerankd's attention projections have no bias terms)")
		}
	}

	// hidden_act goes through ACT2FN, where "silu" and "swish" are both SiLU.
	if v, ok := keys["hidden_act"]; ok {
		var act string
		if json.Unmarshal(v, &act) != nil || (act != "silu" && act != "swish") {
			refuse("hidden_act %s is not supported (rerankd implements SiLU only: down(silu(gate(x)) * up(x)))", short(v))
		}
	}

	errs = append(errs, slidingWindow(c, keys)...)

	// layer_types (transformers 4.53+) says per layer which attention it
	// runs; it must list num_hidden_layers layers, all full.
	if v, ok := present("layer_types"); ok {
		var types []string
		if err := json.Unmarshal(v, &types); err != nil {
			refuse("layer_types %s: want a list of strings", short(v))
		} else {
			if c.NumHiddenLayers > 0 && len(types) != c.NumHiddenLayers {
				refuse("layer_types has %d entries for num_hidden_layers %d", len(types), c.NumHiddenLayers)
			}
			bad := map[string][]int{}
			for i, t := range types {
				if t != "full_attention" {
					bad[t] = append(bad[t], i)
				}
			}
			for _, t := range slices.Sorted(maps.Keys(bad)) {
				refuse("layer_types %q at layers %s is not supported (rerankd implements full causal attention only)", t, layerList(bad[t]))
			}
		}
	}

	// Quantised checkpoints (fp8 with block scales, GPTQ, AWQ, bitsandbytes)
	// store weights that are not the model's values as plain floats.
	if v, ok := present("quantization_config"); ok {
		refuse("quantization_config %s is not supported (rerankd reads unquantised weights only)", short(v))
	}

	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if usedKeys[k] || slices.Contains(checkedKeys, k) {
			continue
		}
		if _, ok := HarmlessKeys[k]; ok {
			continue
		}
		warns = append(warns, fmt.Sprintf("config.json key %q ignored: rerankd neither uses it nor knows it to be harmless; check that it does not change the model", k))
	}
	slices.Sort(warns)
	return warns, errs
}

// slidingWindow refuses a sliding window that would bind. As in
// transformers' Qwen3, layer i attends within a window of sliding_window
// tokens when use_sliding_window is true, sliding_window is not null and
// i >= max_window_layers; a window of at least max_position_embeddings
// tokens never binds for a sequence the model accepts. The keys' types
// are only checked when use_sliding_window is on, since transformers
// ignores them otherwise.
func slidingWindow(c *Config, keys map[string]json.RawMessage) []error {
	v, ok := keys["use_sliding_window"]
	if !ok || isNull(v) {
		return nil
	}
	on, isBool := boolean(v)
	if !isBool {
		return []error{fmt.Errorf("use_sliding_window %s: want true or false", short(v))}
	}
	if !on {
		return nil
	}
	window := float64(defaultSlidingWindow)
	if v, ok := keys["sliding_window"]; ok {
		if isNull(v) {
			return nil // no window: full attention everywhere
		}
		f, isInt := integer(v)
		if !isInt {
			return []error{fmt.Errorf("sliding_window %s: want an integer or null", short(v))}
		}
		window = f
	}
	from := float64(defaultMaxWindowLayers)
	if v, ok := keys["max_window_layers"]; ok {
		f, isInt := integer(v)
		if !isInt {
			return []error{fmt.Errorf("max_window_layers %s: want an integer (use_sliding_window is true)", short(v))}
		}
		from = f
	}
	maxPos := c.MaxPositionEmbeddings
	if maxPos <= 0 {
		maxPos = defaultMaxPositionEmbeddings
	}
	if from >= float64(c.NumHiddenLayers) || window >= float64(maxPos) {
		return nil // no layer slides, or the window covers every position
	}
	first := max(from, 0)
	return []error{fmt.Errorf("use_sliding_window true with sliding_window %v (below max_position_embeddings %d) on layers %v..%d (max_window_layers %v) "+
		"is not supported (rerankd implements full causal attention only)", window, maxPos, first, c.NumHiddenLayers-1, from)}
}

// defaultRope reports whether a rope_scaling (or, withTheta, a
// rope_parameters) object asks for plain RoPE: rope_type (or its older
// name type) "default" and nothing else but, withTheta, rope_theta.
func defaultRope(v json.RawMessage, withTheta bool) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return false
	}
	typed := false
	for k, x := range m {
		switch k {
		case "rope_type", "type":
			var s string
			if json.Unmarshal(x, &s) != nil || s != "default" {
				return false
			}
			typed = true
		case "rope_theta":
			if f, ok := number(x); !withTheta || !ok || !(f > 0) {
				return false
			}
		default:
			return false
		}
	}
	return typed
}

// ropeTheta returns rope_parameters' rope_theta, if it has one.
func ropeTheta(v json.RawMessage) (float64, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return 0, false
	}
	x, ok := m["rope_theta"]
	if !ok {
		return 0, false
	}
	return number(x)
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func boolean(v json.RawMessage) (b, ok bool) {
	return b, json.Unmarshal(v, &b) == nil && !isNull(v)
}

func number(v json.RawMessage) (float64, bool) {
	var f float64
	return f, json.Unmarshal(v, &f) == nil && !isNull(v)
}

func integer(v json.RawMessage) (float64, bool) {
	f, ok := number(v)
	return f, ok && f == float64(int64(f))
}

// layerList prints layer indices, the first few only.
func layerList(ix []int) string {
	const most = 8
	parts := make([]string, 0, most+1)
	for i, x := range ix {
		if i == most {
			parts = append(parts, fmt.Sprintf("... (%d in all)", len(ix)))
			break
		}
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, ", ")
}

// short returns v as compact JSON, cut to a readable length.
func short(v json.RawMessage) string {
	const most = 160
	var b bytes.Buffer
	s := string(bytes.TrimSpace(v))
	if json.Compact(&b, v) == nil {
		s = b.String()
	}
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
