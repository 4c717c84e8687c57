package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rerankd/rerankd/cmd/internal/cli"
)

// TestBadCommandLines: every missing or wrong input is a usage error
// naming each problem at once; nothing is written.
func TestBadCommandLines(t *testing.T) {
	tests := []struct {
		name string
		run  func([]string, *bytes.Buffer) error
		args []string
		want []string
	}{
		{"dist without anything", dist, []string{"--bin", t.TempDir(), "--ort-lib", "/nonexistent.so"},
			[]string{"--out is required", "--version is required", "--epoch is required", "binary rerankd", "binary eval", "/nonexistent.so"}},
		{"image with a stray argument", image, []string{"extra"}, []string{"unexpected arguments"}},
		{"image without a lock", image, []string{"--out", "x", "--version", "v", "--epoch", "1", "--bin", t.TempDir(), "--lock", "/nonexistent.lock"},
			[]string{"binary rerankd"}},
		{"unknown flag", dist, []string{"--nope"}, []string{"-nope"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := tc.run(tc.args, &stderr)
			if !errors.Is(err, cli.ErrUsage) {
				t.Fatalf("error %v is not a usage error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error()+stderr.String(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func dist(args []string, stderr *bytes.Buffer) error {
	return runDist(args, nil, &bytes.Buffer{}, stderr)
}

func image(args []string, stderr *bytes.Buffer) error {
	return runImage(args, nil, &bytes.Buffer{}, stderr)
}
