package model

import (
	"testing"
	"time"
)

func TestPeakGFLOPs(t *testing.T) {
	g, err := PeakGFLOPs(DefaultSessionConfig(), 2, 64, 16, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !(g > 0) {
		t.Errorf("PeakGFLOPs = %v, want > 0", g)
	}
}
