//go:build !linux

package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// pgtest runs servers on Linux only (credentials for root, parent-death
// signals, /proc); elsewhere Start and Shared skip, or fail under CI.

var sigFastShutdown = os.Interrupt

type runAs struct{ name string }

func serverUser() (*runAs, error) {
	return nil, fmt.Errorf("%w: pgtest supports Linux only, not %s", ErrNotInstalled, runtime.GOOS)
}

func (r *runAs) apply(*exec.Cmd)       {}
func (r *runAs) chown(string) error    { return nil }
func newFolder(*runAs) (string, error) { return "", errors.ErrUnsupported }
func startOrphanProof(*exec.Cmd) error { return errors.ErrUnsupported }
func killTree(p *postmaster) error     { return p.cmd.Process.Kill() }
