// Package simredis is a simulated run's way to its embedded Redis: a
// connection that runs each command at once on the writer's goroutine,
// with no socket and no server goroutine, and a Lua runner that runs the
// run's scripts as the server would, atomically. What a command costs on
// the network is the simulation's to say.
package simredis

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// simConn is a simulated run's connection to its embedded server: each
// command written to it runs at once, on the writer's goroutine, and its
// reply waits to be read. No socket and no server goroutine take part: what
// a command costs on the network is the simulation's to say (its latency),
// and anything else would only add the host's time.
type simConn struct {
	srv    *server.Server
	peer   *server.Peer
	in     []byte
	out    bytes.Buffer
	closed bool
	lua    *Lua // runs its scripts; nil: the server does
	multi  bool // inside MULTI: a script is queued, not run
	odd    bool // another database, a login, a subscription: the server runs its scripts
}

// NewConn is a connection to srv whose scripts lua runs (nil: the server
// runs them).
func NewConn(srv *server.Server, lua *Lua) net.Conn { return newSimConn(srv, lua) }

func newSimConn(srv *server.Server, lua *Lua) *simConn {
	c := &simConn{srv: srv, lua: lua}
	c.peer = server.NewPeer(bufio.NewWriter(&c.out))
	return c
}

var errSimClosed = errors.New("store: connection closed")

// Write takes commands (RESP arrays of bulk strings, as clients send them)
// and runs each whole one at once.
func (c *simConn) Write(p []byte) (int, error) {
	if c.closed {
		return 0, errSimClosed
	}
	c.in = append(c.in, p...)
	for {
		args, n, err := parseCommand(c.in)
		if err != nil {
			c.closed = true
			return 0, err
		}
		if n == 0 {
			break
		}
		c.in = c.in[n:]
		c.dispatch(args)
		c.peer.Flush()
		if c.peer.Closed() {
			c.closed = true
			break
		}
	}
	if len(c.in) == 0 {
		c.in = c.in[:0:0]
	}
	return len(p), nil
}

// dispatch runs one command: a script in the runner's kept Lua state
// when the connection is a plain one, anything else on the server.
func (c *simConn) dispatch(args []string) {
	cmd := strings.ToUpper(args[0])
	if c.lua != nil && !c.multi && !c.odd && (cmd == "EVAL" || cmd == "EVALSHA") && c.lua.run(c.peer, cmd, args[1:]) {
		return
	}
	c.srv.Dispatch(c.peer, args)
	switch cmd {
	case "MULTI":
		c.multi = true
	case "EXEC", "DISCARD":
		c.multi = false
	case "SELECT", "AUTH", "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "RESET":
		c.odd = true
	case "HELLO":
		c.odd = c.odd || slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, "AUTH") })
	case "SCRIPT":
		if c.lua != nil && !c.multi {
			c.lua.seen(args)
		}
	}
}

// Read hands out the replies written so far.
func (c *simConn) Read(p []byte) (int, error) {
	if c.out.Len() == 0 {
		if c.closed {
			return 0, io.EOF
		}
		return 0, errors.New("store: no reply from the embedded server")
	}
	return c.out.Read(p)
}

func (c *simConn) Close() error                     { c.closed = true; return nil }
func (c *simConn) LocalAddr() net.Addr              { return simAddr{} }
func (c *simConn) RemoteAddr() net.Addr             { return simAddr{} }
func (c *simConn) SetDeadline(time.Time) error      { return nil }
func (c *simConn) SetReadDeadline(time.Time) error  { return nil }
func (c *simConn) SetWriteDeadline(time.Time) error { return nil }

type simAddr struct{}

func (simAddr) Network() string { return "sim" }
func (simAddr) String() string  { return "embedded" }

// parseCommand reads one RESP array of bulk strings from b: the command,
// and how many bytes it took (0: b does not hold a whole one yet).
func parseCommand(b []byte) ([]string, int, error) {
	line, rest, ok := crlf(b)
	if !ok {
		return nil, 0, nil
	}
	if len(line) < 2 || line[0] != '*' {
		return nil, 0, errors.New("store: a command must be an array")
	}
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil || n < 1 || n > 1<<20 {
		return nil, 0, errors.New("store: bad command length")
	}
	args := make([]string, 0, n)
	used := len(b) - len(rest)
	for range n {
		line, after, ok := crlf(rest)
		if !ok {
			return nil, 0, nil
		}
		if len(line) < 2 || line[0] != '$' {
			return nil, 0, errors.New("store: a command's arguments must be bulk strings")
		}
		size, err := strconv.Atoi(string(line[1:]))
		if err != nil || size < 0 {
			return nil, 0, errors.New("store: bad argument length")
		}
		if len(after) < size+2 {
			return nil, 0, nil
		}
		args = append(args, string(after[:size]))
		rest = after[size+2:]
		used = len(b) - len(rest)
	}
	return args, used, nil
}

// crlf splits b at its first CRLF.
func crlf(b []byte) (line, rest []byte, ok bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+2:], true
}
