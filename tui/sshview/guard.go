package sshview

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/charmbracelet/ssh"
)

// The defaults follow OpenSSH's: LoginGraceTime 30 s, MaxSessions 10 per
// connection, and MaxStartups' hard limit of 100 connections waiting to
// log in. sshd bounds no sessions in all; here every session is a program
// drawing frames, so they are bounded too.
const (
	DefaultLoginGrace  = 30 * time.Second
	DefaultMaxStartups = 100
	DefaultMaxSessions = 10
	DefaultMaxViewers  = 200
)

// guard bounds what anyone who reaches the port can hold. A connection is
// waiting until one of its sessions shows the view, and again once none
// does: a waiting connection counts against maxStartups and is closed
// when it has waited the grace time, so neither a stalled handshake nor
// a logged-in connection without a view keeps a socket. Session channels
// are bounded per connection and in all.
type guard struct {
	grace                                time.Duration
	maxStartups, maxSessions, maxViewers int

	mu       sync.Mutex
	conns    map[*guardedConn]struct{}
	waiting  int // connections showing no view
	sessions int // session channels open, on every connection
	closed   bool
}

func newGuard(c Config) *guard {
	g := &guard{grace: c.LoginGrace, maxStartups: c.MaxStartups, maxSessions: c.MaxSessions,
		maxViewers: c.MaxViewers, conns: map[*guardedConn]struct{}{}}
	if g.grace <= 0 {
		g.grace = DefaultLoginGrace
	}
	if g.maxStartups <= 0 {
		g.maxStartups = DefaultMaxStartups
	}
	if g.maxSessions <= 0 {
		g.maxSessions = DefaultMaxSessions
	}
	if g.maxViewers <= 0 {
		g.maxViewers = DefaultMaxViewers
	}
	return g
}

// guardedConn is one accepted connection and what it holds.
type guardedConn struct {
	net.Conn
	g        *guard
	timer    *time.Timer // closes the connection once it has waited the grace time
	sessions int         // session channels open
	viewing  int         // sessions showing the view
	closed   bool
}

// admit takes c on, or returns nil when too many connections wait.
func (g *guard) admit(c net.Conn) *guardedConn {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.waiting >= g.maxStartups {
		return nil
	}
	gc := &guardedConn{Conn: c, g: g}
	g.conns[gc] = struct{}{}
	g.waiting++
	gc.timer = time.AfterFunc(g.grace, func() { _ = gc.Close() })
	return gc
}

// Close closes the connection once and gives back what it held.
func (gc *guardedConn) Close() error {
	g := gc.g
	g.mu.Lock()
	if !gc.closed {
		gc.closed = true
		gc.timer.Stop()
		delete(g.conns, gc)
		if gc.viewing == 0 {
			g.waiting--
		}
	}
	g.mu.Unlock()
	return gc.Conn.Close()
}

// openSession counts a new session channel on gc, or says why not.
func (g *guard) openSession(gc *guardedConn) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc.sessions >= g.maxSessions {
		return fmt.Errorf("at most %d sessions on one connection", g.maxSessions)
	}
	if g.sessions >= g.maxViewers {
		return fmt.Errorf("this view has %d viewers already; try again later", g.maxViewers)
	}
	gc.sessions++
	g.sessions++
	return nil
}

// closeSession gives back a session channel opened on gc.
func (g *guard) closeSession(gc *guardedConn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gc.sessions--
	g.sessions--
}

// view counts a session of gc starting (+1) or ending (-1) its view; the
// grace time runs while no session of gc shows the view.
func (g *guard) view(gc *guardedConn, delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	was := gc.viewing
	gc.viewing += delta
	if gc.closed {
		return
	}
	switch {
	case was == 0 && gc.viewing > 0:
		gc.timer.Stop()
		g.waiting--
	case was > 0 && gc.viewing == 0:
		gc.timer.Reset(g.grace)
		g.waiting++
	}
}

// closeAll closes every connection and admits no more.
func (g *guard) closeAll() {
	g.mu.Lock()
	g.closed = true
	conns := make([]*guardedConn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// counts reports the connections waiting and the sessions open.
func (g *guard) counts() (waiting, sessions int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting, g.sessions
}

// guardedListener closes at once what the guard does not admit.
type guardedListener struct {
	net.Listener
	g *guard
}

func (l guardedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if gc := l.g.admit(c); gc != nil {
			return gc, nil
		}
		_ = c.Close()
	}
}

// connKey finds a session's guarded connection in its context.
type connKey struct{}

func guardedOf(ctx ssh.Context) *guardedConn {
	gc, _ := ctx.Value(connKey{}).(*guardedConn)
	return gc
}
