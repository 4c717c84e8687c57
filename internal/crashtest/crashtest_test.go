package crashtest

import (
	"slices"
	"testing"
	"time"
)

// TestCrashHarnessChild writes forever when run as Run's child.
func TestCrashHarnessChild(t *testing.T) {
	arg, round := Child()
	if arg == "" {
		t.Skip("child of TestCrashHarness only")
	}
	for i := 0; ; i++ {
		Ack(ID(round, i))
		if i%100 == 99 {
			time.Sleep(time.Millisecond)
		}
	}
}

// TestCrashHarness: the child is killed (it never stops by itself), and the
// IDs come back in order, each round's own, with no torn line.
func TestCrashHarness(t *testing.T) {
	if arg, _ := Child(); arg != "" {
		t.Skip("running as child")
	}
	for round := range 2 {
		ids := Run(t, "TestCrashHarnessChild", "x", round, 20*time.Millisecond)
		if len(ids) == 0 {
			t.Fatalf("round %d: no acknowledged IDs", round)
		}
		for i, id := range ids {
			if want := ID(string(rune('0'+round)), i); id != want {
				t.Fatalf("round %d: id %d = %q, want %q", round, i, id, want)
			}
		}
		if !slices.IsSorted(ids) {
			t.Errorf("round %d: ids out of order", round)
		}
	}
}
