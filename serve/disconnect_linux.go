package serve

import (
	"context"
	"net"
	"syscall"
	"time"
)

// watchDisconnect cancels cancel when the client closes its connection
// while a request is being processed. fasthttp does not read the socket
// during a handler and so never notices (valyala/fasthttp#468); this peeks
// at it with MSG_PEEK|MSG_DONTWAIT every `every`, which consumes nothing, so
// a pipelined next request stays intact: 0 bytes means the peer sent FIN.
// The returned stop must be called before the handler returns (fasthttp
// reuses the connection afterwards); it waits for the watcher to exit.
func watchDisconnect(conn net.Conn, cancel context.CancelFunc, every time.Duration) (stop func()) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		var buf [1]byte
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			closed := false
			_ = raw.Control(func(fd uintptr) {
				n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
				closed = n == 0 && err == nil || err == syscall.ECONNRESET
			})
			if closed {
				cancel()
				return
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}
