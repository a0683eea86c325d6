package store

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// A server that refuses a client (maxclients reached, protected mode)
// writes its reason on the new connection and hangs up. The first command
// written then fails with "broken pipe" or "connection reset by peer",
// which hides the reason: a conn from TellingDialer reads it back instead.

// reasonWait bounds reading a refusal's reason after a failed write.
const reasonWait = 50 * time.Millisecond

// RefusedError is a server's own reason for dropping a connection.
type RefusedError struct {
	Reason string // the server's words, e.g. "ERR max number of clients reached"
	Err    error  // what the write saw
	// Unserved says the server hung up before it answered anything on
	// this connection: it never read a command from it, so whatever was
	// being sent did not happen.
	Unserved bool
}

func (e *RefusedError) Error() string { return e.Reason }

// NeverRan reports whether the command that met e certainly did not run.
func (e *RefusedError) NeverRan() bool { return e.Unserved }

func (e *RefusedError) Unwrap() error { return e.Err }

// TellingDialer wraps go-redis's dialer for o.
func TellingDialer(o *redis.Options) {
	dial := redis.NewDialer(o)
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &tellingConn{Conn: c}, nil
	}
}

type tellingConn struct {
	net.Conn
	said   string // the last error line the server sent at the start of a read
	served bool   // the server has sent something on this connection
}

// NetConn lets go-redis's health check see the socket.
func (c *tellingConn) NetConn() net.Conn { return c.Conn }

func (c *tellingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		if why := c.reason(); why != "" {
			return n, &RefusedError{Reason: why, Err: err, Unserved: !c.served}
		}
	}
	return n, err
}

func (c *tellingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && b[0] == '-' {
		line, _, _ := strings.Cut(string(b[1:n]), "\n")
		c.said = strings.TrimSpace(line)
	}
	// A refusal is written on accept, before the server reads anything.
	if n > 0 && !(b[0] == '-' && turnedAway(c.said)) {
		c.served = true
	}
	if n == 0 && err != nil && errors.Is(err, syscall.ECONNRESET) {
		if why := c.reason(); why != "" {
			return 0, &RefusedError{Reason: why, Err: err, Unserved: !c.served}
		}
	}
	return n, err
}

// turnedAway reports whether a server's error line is one it writes to a
// connection it will not serve, before reading from it.
func turnedAway(line string) bool {
	return strings.Contains(line, "max number of clients reached") || strings.HasPrefix(line, "DENIED")
}

// reason reads an error line the server left before hanging up, or the
// last one it sent (go-redis read it as a reply and kept the conn).
func (c *tellingConn) reason() string {
	if c.Conn.SetReadDeadline(time.Now().Add(reasonWait)) == nil {
		line, _ := bufio.NewReaderSize(c.Conn, 512).ReadString('\n')
		if strings.HasPrefix(line, "-") {
			return strings.TrimSpace(line[1:])
		}
	}
	return c.said
}

// refusalHook remembers the first error by which a node's server refused
// locklab (too many clients, a password, a permission), so a run that met
// one ends with the server's words instead of a count of failed workers.
type refusalHook struct{ first *atomic.Pointer[error] }

// Refusal reports whether err means the server will not serve locklab as
// configured, as opposed to a lock being contended or a network blip.
func Refusal(err error) bool {
	if err == nil {
		return false
	}
	var re *RefusedError
	if errors.As(err, &re) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"max number of clients reached", "WRONGPASS", "NOAUTH", "NOPERM", "DENIED"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func (h refusalHook) note(err error) {
	if Refusal(err) {
		h.first.CompareAndSwap(nil, &err)
	}
}

func (h refusalHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h refusalHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.note(err)
		return err
	}
}

func (h refusalHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.note(err)
		for _, c := range cmds {
			h.note(c.Err())
		}
		return err
	}
}

// Refused is the first refusal any node's server gave during the run (see
// Refusal), as a ConnectError with the server's words and a hint; nil if
// none did.
func (s *Store) Refused() error {
	for _, n := range s.nodes {
		if p := n.refused.Load(); p != nil {
			return &ConnectError{Addr: n.Addr, Err: *p, raw: n.url}
		}
	}
	return nil
}
