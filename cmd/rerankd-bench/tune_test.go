package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTuneTiny: tune prints one result per setting, the default first with
// ratio 1, every setting measured; bad flags are usage errors.
func TestTuneTiny(t *testing.T) {
	dir := writeTiny(t, "none")
	code, out, errs := runCLI(t, "tune", "--model", dir, "--rounds", "1", "--candidates", "3", "--json")
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	var res []tuneResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("tune output %q: %v", out, err)
	}
	want := tuneSettings(2)
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d", len(res), len(want))
	}
	for i, r := range res {
		if r.tuneSetting != want[i] || !(r.PairsPerS > 0) || !(r.P50ms > 0) || (i == 0 && r.Ratio != 1) {
			t.Errorf("result %d: %+v (setting %+v)", i, r, want[i])
		}
	}
	for _, args := range [][]string{
		{"tune"},
		{"tune", "--model", dir, "--rounds", "0"},
		{"tune", "--model", dir, "--quant", "int3"},
	} {
		if code, _, errs := runCLI(t, args...); code != 2 || !strings.Contains(errs, "usage") && !strings.Contains(errs, "--") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errs)
		}
	}
	// The folder has no int8 variant: an error naming the fix, not a panic.
	if code, _, errs := runCLI(t, "tune", "--model", dir, "--quant", "int8"); code == 0 || !strings.Contains(errs, "--quant int8") {
		t.Errorf("int8 on a folder without it: exit %d, %q", code, errs)
	}
}
