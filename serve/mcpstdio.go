package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is MCP's stdio framing (one JSON-RPC message per line)
// for a server that must outlive its client's mistakes. The SDK's own
// IOTransport ends the session on the first frame it cannot decode; here
// a bad frame (not JSON, a truncated object, a batch array, nesting
// deeper than encoding/json reads, a line over MaxLine) gets a JSON-RPC
// error reply (-32700 parse error, -32600 invalid request) and the next
// line is read. At the end of input, every request already read is
// answered (for up to Drain) before the session ends.
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
	// MaxLine bounds one message; a longer line is skipped to its end and
	// answered -32600.
	MaxLine int
	// Drain bounds the wait at the end of input for requests in flight.
	Drain time.Duration
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{t: t, frames: make(chan stdioFrame), closed: make(chan struct{}), pending: map[any]bool{}}
	go c.readLoop()
	return c, nil
}

type stdioFrame struct {
	msg jsonrpc.Message
	err error
}

type stdioConn struct {
	t         *StdioTransport
	frames    chan stdioFrame
	closed    chan struct{}
	closeOnce sync.Once
	wmu       sync.Mutex // one line at a time on Out

	pmu     sync.Mutex
	pending map[any]bool // IDs of requests read and not yet answered
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// Read returns the next well-formed message; at the end of input it
// first waits for the answers to the requests in flight.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case f := <-c.frames:
		if f.err != nil {
			c.drain(ctx)
			return nil, f.err
		}
		switch m := f.msg.(type) {
		case *jsonrpc.Request:
			c.pmu.Lock()
			if m.ID.IsValid() {
				c.pending[m.ID.Raw()] = true
			} else if m.Method == "notifications/cancelled" {
				// A cancelled request gets no answer: stop waiting for it.
				var p struct {
					RequestID any `json:"requestId"`
				}
				if json.Unmarshal(m.Params, &p) == nil {
					if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
						delete(c.pending, id.Raw())
					}
				}
			}
			c.pmu.Unlock()
		}
		return f.msg, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
}

// drain waits until every request read has been answered, Drain passes,
// or the connection or ctx ends.
func (c *stdioConn) drain(ctx context.Context) {
	deadline := time.Now().Add(c.t.Drain)
	for time.Now().Before(deadline) {
		c.pmu.Lock()
		n := len(c.pending)
		c.pmu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.pmu.Lock()
		delete(c.pending, r.ID.Raw())
		c.pmu.Unlock()
	}
	return c.writeLine(b)
}

func (c *stdioConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.t.Out.Write(append(b, '\n'))
	return err
}

// readLoop reads lines, answers the bad ones itself and hands the rest on.
func (c *stdioConn) readLoop() {
	br := bufio.NewReaderSize(c.t.In, 64<<10)
	for {
		line, tooLong, err := readLine(br, c.t.MaxLine)
		if tooLong {
			c.replyError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message over %d bytes", c.t.MaxLine))
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			if msg, ok := c.parse(line); ok {
				select {
				case c.frames <- stdioFrame{msg: msg}:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			select {
			case c.frames <- stdioFrame{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// parse decodes one line, answering it with a JSON-RPC error when it is
// no message the server can take.
func (c *stdioConn) parse(line []byte) (jsonrpc.Message, bool) {
	if line[0] == '[' {
		c.replyError(nil, jsonrpc.CodeInvalidRequest, "batches are not supported: send one JSON-RPC message per line")
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		return msg, true
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if jerr := json.Unmarshal(line, &probe); jerr != nil {
		c.replyError(nil, jsonrpc.CodeParseError, "parse error: "+shortErr(jerr))
		return nil, false
	}
	c.replyError(probe.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+shortErr(err))
	return nil, false
}

// replyError writes an error response; id nil or not a string or number
// is sent as null.
func (c *stdioConn) replyError(id json.RawMessage, code int64, msg string) {
	var v any
	if json.Unmarshal(id, &v) != nil {
		v = nil
	}
	switch v.(type) {
	case string, float64:
	default:
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	_ = c.writeLine(b)
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// readLine returns the next line without its newline. A line over max
// bytes is read to its end and dropped (tooLong). err is io.EOF (or the
// read error) after the last line.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, tooLong, err
		}
	}
}
