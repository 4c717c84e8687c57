package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/internal/fixture"
	"github.com/rerankd/rerankd/internal/testenv"
)

// TestMain loads ONNX Runtime once for the package, after checking the error
// for a missing library (which can only be seen before the first load).
func TestMain(m *testing.M) {
	missing := filepath.Join(os.TempDir(), "no-such-dir", "libonnxruntime.so.1")
	err := InitRuntime(missing)
	if err == nil || !strings.Contains(err.Error(), "scripts/setup.sh") {
		fmt.Fprintf(os.Stderr, "InitRuntime(missing) = %v, want an error naming the fix\n", err)
		os.Exit(1)
	}
	if err := InitRuntime(testenv.ORTLib()); err != nil {
		fmt.Fprintln(os.Stderr, "model tests need ONNX Runtime (run scripts/setup.sh):", err)
		os.Exit(1)
	}
	// Idle intra-op threads block instead of spinning: a test's sessions
	// share two cores with the other test binaries of its tier, and scores
	// do not depend on it (docs/testing.md).
	defaultSpinning = false
	os.Exit(fixture.Run(m)) // fixtures shared by this binary's tests (or the run's: scripts/gotest.sh)
}
