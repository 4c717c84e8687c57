// Package crashtest is the one SIGKILL harness of the durability tests: the
// parent re-runs its own test binary as a child that writes forever and
// prints each write's ID to stdout once the write is acknowledged (durable),
// kills the child with SIGKILL at a moment the test picks, and returns the
// IDs acknowledged before the kill. The test then reopens what the child
// wrote and checks that every acknowledged write survived.
//
// The child is a test function of the same package that calls Child first
// (it returns "" and the function skips in the parent) and names its writes
// with ID. A torn last line (the kill landed mid-print) is dropped.
package crashtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const (
	envArg   = "RERANKD_CRASH_ARG"
	envRound = "RERANKD_CRASH_ROUND"
	// firstAck bounds the wait for the child's first acknowledgement (its
	// start, under the race detector on a busy machine included).
	firstAck = 30 * time.Second
)

// Child returns the argument the parent gave Run, and the round's tag for
// ID, in the child process; arg is "" in the parent.
func Child() (arg, round string) { return os.Getenv(envArg), os.Getenv(envRound) }

// ID names the child's i-th write of a round: "r<round>-<i, six digits>".
func ID(round string, i int) string { return fmt.Sprintf("r%s-%06d", round, i) }

// Ack reports id acknowledged: one line on stdout, in the pipe once Write
// returns (os.Stdout is unbuffered).
func Ack(id string) { fmt.Fprintln(os.Stdout, id) }

// Run starts this test binary's test childTest (an exact name) with arg,
// lets it write for delay after its first acknowledgement, SIGKILLs it and
// returns the IDs it acknowledged, in order. The child exiting by itself,
// or not acknowledging within firstAck, fails the test.
func Run(t testing.TB, childTest, arg string, round int, delay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+childTest+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), envArg+"="+arg, fmt.Sprintf("%s=%d", envRound, round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4096)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var ids []string
	select {
	case id, ok := <-lines:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("child exited before its first ack: %s", stderr.String())
		}
		ids = append(ids, id)
	case <-time.After(firstAck):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child made no progress in %s: %s", firstAck, stderr.String())
	}
	kill := time.After(delay)
loop:
	for {
		select {
		case id, ok := <-lines:
			if !ok {
				break loop
			}
			ids = append(ids, id)
		case <-kill:
			_ = cmd.Process.Kill() // SIGKILL on Unix
			kill = nil
		}
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("child exited cleanly: %s", stderr.String())
	}
	tag := fmt.Sprint(round)
	want := len(ID(tag, 0))
	for i, id := range ids {
		if len(id) != want || !strings.HasPrefix(id, "r"+tag+"-") {
			ids = ids[:i] // a torn last line
			break
		}
	}
	return ids
}
