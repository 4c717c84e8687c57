//go:build !linux

package serve

import (
	"context"
	"net"
	"time"
)

// watchDisconnect is a no-op off Linux: abandoned requests end at their
// timeout instead.
func watchDisconnect(net.Conn, context.CancelFunc, time.Duration) func() { return func() {} }
