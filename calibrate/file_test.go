package calibrate

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

var created = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func toyCalibration(t *testing.T, m Method) *Calibration {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Method = m
	c, _, err := Calibrate(toyPairs(), cfg, Source{Pipeline: "toy", Data: "toyPairs", Created: created, Tool: "calibrate test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGolden pins the file format. Floats are compared with a tolerance:
// math.Exp may differ in the last bit between architectures. Run with
// -update to rewrite after an intended change.
func TestGolden(t *testing.T) {
	for _, m := range []Method{MethodPlatt, MethodIsotonic} {
		t.Run(string(m), func(t *testing.T) {
			got, err := toyCalibration(t, m).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "calibration-"+string(m)+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if diff := jsonDiff("", g, w); diff != "" {
				t.Errorf("differs from %s (go test -update rewrites it): %s\ngot:\n%s", path, diff, got)
			}
			if _, err := Parse(want); err != nil {
				t.Errorf("golden file does not parse: %v", err)
			}
		})
	}
}

// jsonDiff describes the first difference between two decoded JSON values.
func jsonDiff(path string, got, want any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %v, want %v", path, got, want)
		}
		for k := range w {
			if d := jsonDiff(path+"."+k, g[k], w[k]); d != "" {
				return d
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %v, want %v", path, got, want)
		}
		for i := range w {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); d != "" {
				return d
			}
		}
	case float64:
		if g, ok := got.(float64); !ok || !near(g, w, 1e-9) {
			return fmt.Sprintf("%s: %v, want %v", path, got, want)
		}
	default:
		if got != want {
			return fmt.Sprintf("%s: %v, want %v", path, got, want)
		}
	}
	return ""
}

const validPlatt = `{"version": 1, "method": "platt", "input": "probability",
 "platt": {"slope": 1.2, "intercept": -2, "feature": "logit"},
 "threshold": 0.3, "rule": "maxf1",
 "source": {"pipeline": "bm25", "data": "d", "pairs": 10, "positives": 2, "groups": 2, "created": "2026-12-01T00:00:00Z", "tool": "t"}}`

// parseCases are Parse's error table and FuzzParse's seeds.
var parseCases = []struct {
	name, doc, want string // want "" means valid
}{
	{"platt", validPlatt, ""},
	{"isotonic", `{"version":1,"method":"isotonic","input":"real","isotonic":{"x":[0,2,5],"y":[0,0.5,0.5]},"threshold":0.5,"rule":"precision:0.8","source":{}}`, ""},
	{"identity", `{"version":1,"method":"identity","input":"probability","threshold":0.7,"rule":"manual","source":{}}`, ""},
	{"no version", `{"method":"identity"}`, "no version"},
	{"version 2", `{"version":2,"method":"quantum","future":true}`, "version 2"},
	{"unknown method", strings.Replace(validPlatt, `"platt", "input"`, `"svm", "input"`, 1), `method "svm"`},
	{"unknown field", strings.Replace(validPlatt, `"rule"`, `"colour": 1, "rule"`, 1), "colour"},
	{"NaN literal", strings.Replace(validPlatt, "1.2", "NaN", 1), "invalid character"},
	{"huge number", strings.Replace(validPlatt, "1.2", "1e999", 1), "1e999"},
	{"negative slope", strings.Replace(validPlatt, "1.2", "-1.2", 1), "slope"},
	{"threshold above 1", strings.Replace(validPlatt, "0.3", "1.5", 1), "threshold 1.5"},
	{"threshold below 0", strings.Replace(validPlatt, "0.3", "-0.1", 1), "threshold -0.1"},
	{"missing params", strings.Replace(validPlatt, `"platt": {"slope": 1.2, "intercept": -2, "feature": "logit"},`, "", 1), "field platt"},
	{"logit of real", strings.Replace(validPlatt, `"probability"`, `"real"`, 1), "logit needs input probability"},
	{"bad rule", strings.Replace(validPlatt, "maxf1", "best", 1), `rule "best"`},
	{"trailing data", validPlatt + "{}", "after"},
	{"non-monotone knots", `{"version":1,"method":"isotonic","input":"real","isotonic":{"x":[0,1,2],"y":[0,0.6,0.5]},"threshold":0.5,"rule":"maxf1","source":{}}`, "not monotone"},
	{"knots not increasing", `{"version":1,"method":"isotonic","input":"real","isotonic":{"x":[0,1,1],"y":[0,0.5,0.5]},"threshold":0.5,"rule":"maxf1","source":{}}`, "must increase"},
	{"knot above 1", `{"version":1,"method":"isotonic","input":"real","isotonic":{"x":[0],"y":[1.5]},"threshold":0.5,"rule":"maxf1","source":{}}`, "outside [0, 1]"},
	{"no knots", `{"version":1,"method":"isotonic","input":"real","isotonic":{"x":[],"y":[]},"threshold":0.5,"rule":"maxf1","source":{}}`, "at least 1"},
	{"identity of real", `{"version":1,"method":"identity","input":"real","threshold":0.5,"rule":"maxf1","source":{}}`, "identity needs"},
	{"bad counts", strings.Replace(validPlatt, `"positives": 2`, `"positives": 20`, 1), "source counts"},
	{"bad held-out", strings.Replace(validPlatt, `"rule"`, `"held_out": {"f1": 2}, "rule"`, 1), "held_out"},
	{"not JSON", `version 1`, "invalid character"},
	{"every problem at once", `{"version":1,"method":"platt","input":"real","platt":{"slope":-1,"intercept":0,"feature":"logit"},"threshold":2,"rule":"x","source":{}}`, "slope -1"},
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse([]byte(c.doc))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("valid file rejected: %v", err)
			case c.want == "" && got == nil:
				t.Fatal("nil calibration")
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	// errors.Join: every problem is listed.
	_, err := Parse([]byte(parseCases[len(parseCases)-1].doc))
	for _, want := range []string{"slope -1", "logit needs", "threshold 2", `rule "x"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestApplyProperties: Apply is in [0, 1], non-decreasing, never NaN, on
// random valid calibrations and hostile inputs.
func TestApplyProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	inputs := []float64{math.Inf(-1), -1e308, -5, -1e-300, 0, 1e-300, 1e-13, 0.2, 0.5, 1 - 1e-13, 1, 5, 1e308, math.Inf(1)}
	for range 300 {
		var c *Calibration
		switch rng.IntN(3) {
		case 0:
			f := []Feature{FeatureLogit, FeatureScore}[rng.IntN(2)]
			in := InputProbability
			if f == FeatureScore && rng.IntN(2) == 0 {
				in = InputReal
			}
			c = &Calibration{Version: 1, Method: MethodPlatt, Input: in, Rule: "maxf1",
				Platt: &Platt{Slope: rng.ExpFloat64() * float64(rng.IntN(2)) * 10, Intercept: rng.NormFloat64() * 20, Feature: f}}
		case 1:
			n := 1 + rng.IntN(20)
			scores, labels := make([]float64, n), make([]bool, n)
			for i := range scores {
				scores[i], labels[i] = rng.NormFloat64(), rng.IntN(2) == 0
			}
			m, _ := FitIsotonic(scores, labels)
			c = &Calibration{Version: 1, Method: MethodIsotonic, Input: InputReal, Rule: "maxf1", Isotonic: &m}
		default:
			c = &Calibration{Version: 1, Method: MethodIdentity, Input: InputProbability, Rule: "manual"}
		}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		checkApply(t, c, inputs)
	}
}

func checkApply(t testing.TB, c *Calibration, sorted []float64) {
	t.Helper()
	if p := c.Apply(math.NaN()); p != 0 {
		t.Fatalf("Apply(NaN) = %v, want 0", p)
	}
	prev := 0.0
	for _, s := range sorted {
		p := c.Apply(s)
		if !(p >= 0 && p <= 1) || p < prev {
			t.Fatalf("%+v: Apply(%v) = %v after %v", c, s, p, prev)
		}
		prev = p
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "calib.json")
	c := toyCalibration(t, MethodIsotonic)
	for range 2 { // the second save replaces the first
		if err := c.Save(path); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []float64{0, 0.33, 0.5, 0.77, 1} {
		if got.Apply(s) != c.Apply(s) {
			t.Errorf("Apply(%v): loaded %v, saved %v", s, got.Apply(s), c.Apply(s))
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only calib.json (no temp files)", len(entries))
	}
	if err := c.Save(filepath.Join(dir, "missing", "c.json")); err == nil {
		t.Error("save into a missing folder: no error")
	}
	bad := *c
	bad.Threshold = 2
	if err := bad.Save(path); err == nil {
		t.Error("invalid calibration saved")
	}
	if _, err := Load(filepath.Join(dir, "nope.json")); err == nil {
		t.Error("loading a missing file: no error")
	}
}

// FuzzParse: Parse never panics; what it accepts validates, round-trips
// through Marshal, and applies monotonically into [0, 1].
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c.doc))
	}
	grid := []float64{math.Inf(-1), -3, 0, 1e-9, 0.1, 0.5, 0.9, 1, 3, math.Inf(1)}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		checkApply(t, c, grid)
		out, err := c.Marshal()
		if err != nil {
			t.Fatalf("accepted file does not marshal: %v", err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("round trip: %v\n%s", err, out)
		}
	})
}
