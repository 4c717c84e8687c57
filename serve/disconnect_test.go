package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestClientDisconnectCancels: a client that closes its connection while
// its request waits gets that request cancelled at once, not at the
// (minute-long) timeout.
func TestClientDisconnectCancels(t *testing.T) {
	b := &cancelBackend{ended: make(chan error, 1)}
	base := start(t, DefaultConfig(), b)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"query":"q","documents":["a"]}`
	fmt.Fprintf(conn, "POST /rerank HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	time.Sleep(100 * time.Millisecond) // the handler is now waiting
	_ = conn.Close()
	select {
	case err := <-b.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("backend context ended with %v, want Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("request not cancelled 5 s after the client disconnected")
	}
}
