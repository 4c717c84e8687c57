package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/paths"
	"github.com/rerankd/rerankd/internal/testenv"
)

// scoreChild runs `rerankd score` in a child process (one ONNX Runtime
// library per process) with env added.
func scoreChild(t *testing.T, env []string, args ...string) (scoreOut, string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"score"}, args...)...)
	cmd.Env = append(append(os.Environ(), "RERANKD_TEST_AS_CLI=1"), env...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	var s scoreOut
	if err == nil {
		if jerr := json.Unmarshal(out, &s); jerr != nil {
			t.Fatalf("score output %q: %v", out, jerr)
		}
	}
	return s, errb.String(), err
}

// TestGPUBuildOnCPU: with `make setup-gpu`'s CUDA build of ONNX Runtime
// 1.29 installed, on a machine without CUDA, (1) the 1.29 core scores the
// CPU path within 1e-6 of the 1.30 core setup installs, on a generated
// model, and (2) `score --provider cuda` finds that build by default and
// fails with exit 1 and a message naming the CUDA library it could not
// load and `make setup-gpu`, never a crash. Skipped where setup-gpu has
// not run (the download is ~290 MB; scripts/test_setup_gpu.py tests the
// script itself in CI) or where CUDA is present.
func TestGPUBuildOnCPU(t *testing.T) {
	gpuLib := paths.ORTGPULib()
	if _, err := os.Stat(gpuLib); err != nil {
		t.Skipf("skipped: no CUDA build of ONNX Runtime at %s (run make setup-gpu)", gpuLib)
	}
	testenv.Require(t, testenv.ORTLib())
	dir := filepath.Join(t.TempDir(), "tiny")
	if code, _, errs := runCLI(t, "testmodel", "--out", dir, "--seed", "5"); code != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	args := []string{"--model", dir, "--query", "What did Caroline do?", "--doc", "Caroline went to the support group",
		"--doc", "Melanie painted a sunset", "--doc", ""}
	ref, errs, err := scoreChild(t, []string{"ORT_LIB=" + testenv.ORTLib()}, args...)
	if err != nil {
		t.Fatalf("score on the 1.30 core: %v: %s", err, errs)
	}
	got, errs, err := scoreChild(t, []string{"ORT_LIB=" + gpuLib}, args...)
	if err != nil {
		t.Fatalf("score on the 1.29 CUDA build, cpu provider: %v: %s", err, errs)
	}
	if len(got.Logits) != len(ref.Logits) || len(ref.Logits) != 3 {
		t.Fatalf("logits: %v vs %v", got.Logits, ref.Logits)
	}
	// Scores within 1e-6; logits within 5e-6 (float32 kernels of two
	// builds round differently: 1.4e-6 measured on this model).
	for i := range ref.Logits {
		if d := math.Abs(got.Scores[i] - ref.Scores[i]); d > 1e-6 {
			t.Errorf("doc %d: score on the 1.29 core %.8f vs 1.30 core %.8f (|d| %.2g > 1e-6)", i, got.Scores[i], ref.Scores[i], d)
		}
		if d := math.Abs(got.Logits[i] - ref.Logits[i]); d > 5e-6 {
			t.Errorf("doc %d: logit on the 1.29 core %.8f vs 1.30 core %.8f (|d| %.2g > 5e-6)", i, got.Logits[i], ref.Logits[i], d)
		}
		t.Logf("doc %d: |dlogit| %.2g, |dscore| %.2g", i, math.Abs(got.Logits[i]-ref.Logits[i]), math.Abs(got.Scores[i]-ref.Scores[i]))
	}
	// --provider cuda with no --ort-lib and no ORT_LIB: setup-gpu's build.
	env := []string{"ORT_LIB="}
	_, errs, err = scoreChild(t, env, append(args, "--provider", "cuda")...)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Skipf("skipped: --provider cuda worked here (CUDA present?): %v", err)
	}
	if ee.ExitCode() != 1 {
		t.Errorf("exit %d, want 1: %s", ee.ExitCode(), errs)
	}
	for _, want := range []string{"cuda: libcublasLt.so.13 is missing", "make setup-gpu", "CUDA 13"} {
		if !strings.Contains(errs, want) {
			t.Errorf("--provider cuda error lacks %q:\n%s", want, errs)
		}
	}
	t.Logf("--provider cuda: %s", strings.TrimSpace(errs))
	if strings.Contains(errs, "panic") || strings.Contains(errs, "SIGSEGV") {
		t.Errorf("crash:\n%s", errs)
	}
	// serve --provider cuda: the same default library, the same message,
	// exit 1 before listening.
	cmd := exec.Command(os.Args[0], "serve", "--model", dir, "--provider", "cuda", "--store", "none", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "RERANKD_TEST_AS_CLI=1", "ORT_LIB=")
	out, err := cmd.CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "libcublasLt.so.13 is missing") ||
		!strings.Contains(string(out), "make setup-gpu") {
		t.Errorf("serve --provider cuda: %v:\n%s", err, out)
	}
}
