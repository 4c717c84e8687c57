package serve

import (
	"io"
	"net"
	"sync/atomic"
	"time"
)

// Lingering close: when fasthttp rejects a request before reading its body
// (413 body too large, 431 headers too large) it writes the error and
// closes the connection while the client is still sending. Closing a
// socket with unread data makes the kernel send RST, which discards the
// error answer in the client's receive buffer: the client sees "connection
// reset" instead of the 413. Connections marked by lingerOnClose instead
// half-close (FIN after the answer) and drain what the client still sends
// for a short time, in the background, before closing; as Go's net/http
// does.
const (
	lingerFor = 500 * time.Millisecond
	lingerMax = 64 << 20 // bytes drained at most
)

// lingerListener hands out connections that can linger on close.
type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		return &lingerConn{TCPConn: tc}, nil
	}
	return c, err
}

// lingerConn embeds *net.TCPConn, so it is still a syscall.Conn for
// watchDisconnect.
type lingerConn struct {
	*net.TCPConn
	linger atomic.Bool
}

// lingerOnClose marks c to drain before it closes; other conns are left alone.
func lingerOnClose(c net.Conn) {
	if lc, ok := c.(*lingerConn); ok {
		lc.linger.Store(true)
	}
}

func (c *lingerConn) Close() error {
	if !c.linger.Load() {
		return c.TCPConn.Close()
	}
	if err := c.CloseWrite(); err != nil {
		return c.TCPConn.Close()
	}
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(lingerFor))
		_, _ = io.CopyN(io.Discard, c.TCPConn, lingerMax)
		_ = c.TCPConn.Close()
	}()
	return nil
}
