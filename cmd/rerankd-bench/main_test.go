package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs rerankd-bench with args in this process.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// cliCase is one command line and what it must do.
type cliCase struct {
	name  string
	args  []string
	stdin string
	code  int      // 1: failure, 2: usage; 0: accepted
	want  []string // substrings of stderr
	out   string
}
