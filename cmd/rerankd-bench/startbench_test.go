package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/pagecache"
)

// TestStartBenchTiny: start-bench on a tiny folder reports every variant
// and weights asked for, with medians that are the medians of the runs it
// lists, ratios that are the quotients of its own medians, a session-cache
// entry written once before measuring, and first starts that began with
// the files out of the page cache. It checks the report, not the timings.
func TestStartBenchTiny(t *testing.T) {
	if !pagecache.Supported {
		t.Skip("start-bench needs page cache control")
	}
	if testing.Short() {
		t.Skip("-short: 13 server starts")
	}
	dir := writeTiny(t, "int8")
	// Every variant of one weights in the JSON run (two rounds: medians of
	// two), every weights of one variant in the text run (one round): each
	// start is a fresh process, and the cross product is what start-bench
	// builds from the two lists either way.
	const rounds = 2
	code, out, errs := runCLI(t, "start-bench", "--model", dir, "--rounds", "2", "--quant", "int8",
		"--variants", "default,session-cache+prefetch", "--candidates", "3", "--threads", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r startBenchResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if r.Rounds != rounds || r.Base != "default" || len(r.Variants) != 2 {
		t.Fatalf("rounds %d base %q variants %d, want %d, default, 2", r.Rounds, r.Base, len(r.Variants), rounds)
	}
	if want := "[8/8]"; !strings.Contains(errs, want) {
		t.Errorf("progress lines lack %s: %s", want, errs)
	}
	evictWorks := evictionWorks(t)
	for i, v := range r.Variants {
		name := v.Quant + " " + v.Variant
		if wantV := []string{"default", "session-cache+prefetch"}[i]; v.Quant != "int8" || v.Variant != wantV {
			t.Errorf("variant %d is %s, want int8 %s", i, name, wantV)
		}
		for _, k := range []struct {
			kind string
			st   startStats
		}{{"first", v.First}, {"repeat", v.Repeat}} {
			st := k.st
			if len(st.Runs) != rounds || st.ReadyS != median(st.Runs) || st.ReadyS <= 0 {
				t.Errorf("%s %s: ready %v of runs %v, want the median of %d positive runs", name, k.kind, st.ReadyS, st.Runs, rounds)
			}
			if st.FirstRequestS <= 0 || st.SecondRequestS <= 0 || st.ReadyPlusFirstS < st.ReadyS || st.CPUS <= 0 || st.PeakRSSMB <= 0 ||
				st.PeakRSSAfterMB < st.PeakRSSMB || st.ResidentBefore < 0 || st.ResidentBefore > 1 {
				t.Errorf("%s %s: implausible %+v", name, k.kind, st)
			}
		}
		if evictWorks && v.First.ResidentBefore > 0.1 {
			t.Errorf("%s: %.0f%% of the files resident before first starts, want them dropped", name, 100*v.First.ResidentBefore)
		}
		if evictWorks && v.Repeat.ResidentBefore <= v.First.ResidentBefore {
			t.Errorf("%s: resident before repeat starts %.2f, not above first starts' %.2f", name, v.Repeat.ResidentBefore, v.First.ResidentBefore)
		}
		if math.Abs(v.FirstOverRepeat-v.First.ReadyS/v.Repeat.ReadyS) > 1e-12 {
			t.Errorf("%s: first/repeat %v, want %v", name, v.FirstOverRepeat, v.First.ReadyS/v.Repeat.ReadyS)
		}
		cache := strings.Contains(v.Variant, "session-cache")
		if cache != (v.SetupS > 0 && v.DiskMB > 0) {
			t.Errorf("%s: setup %v s, disk %v MB: want both > 0 exactly for a session-cache variant", name, v.SetupS, v.DiskMB)
		}
		if v.Variant == "default" && (v.FirstOverBase != 1 || v.RepeatOverBase != 1 || v.SecondRequestOverBase != 1) {
			t.Errorf("base %s: ratios %v %v %v, want 1", name, v.FirstOverBase, v.RepeatOverBase, v.SecondRequestOverBase)
		}
	}
	// The text report carries the same table: a first and a repeat row
	// per variant, each weights asked for in order.
	code, out, errs = runCLI(t, "start-bench", "--model", dir, "--rounds", "1", "--quant", "fp32,int8", "--variants", "default", "--candidates", "2")
	rows := regexp.MustCompile(`(?m)^\s*(fp32|int8)\s+default\s+(first|repeat)\s`).FindAllStringSubmatch(out, -1)
	var got []string
	for _, m := range rows {
		got = append(got, m[1]+" "+m[2])
	}
	if want := []string{"fp32 first", "fp32 repeat", "int8 first", "int8 repeat"}; code != 0 || !strings.Contains(out, "first/repeat") || !slices.Equal(got, want) {
		t.Errorf("text report: exit %d, rows %v (want %v), %q, %s", code, got, want, out, errs)
	}
}

// evictionWorks reports whether this test's temporary folders' files can
// be dropped from the page cache (not on tmpfs).
func evictionWorks(t *testing.T) bool {
	t.Helper()
	p := writeTexts(t, "probe", strings.Repeat("x", 1<<20))
	u, err := pagecache.Evict(p)
	return err == nil && u.Fraction() < 0.1
}

func TestStartBenchBadInput(t *testing.T) {
	dir := writeTiny(t, "none")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no model", nil, "--model is required"},
		{"unknown variant", []string{"--model", dir, "--variants", "default,turbo"}, `unknown "turbo"`},
		{"rounds", []string{"--model", dir, "--rounds", "0"}, "--rounds 0"},
		{"every problem at once", []string{"--model", dir, "--rounds", "0", "--candidates", "0"}, "--candidates 0"},
		{"weights the folder lacks", []string{"--model", dir, "--quant", "int8"}, "has no model.int8.onnx"},
		{"not a folder", []string{"--model", filepath.Join(dir, "model.onnx")}, "not a folder"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, append([]string{"start-bench"}, c.args...)...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, c.want)
			}
		})
	}
}
