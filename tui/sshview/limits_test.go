package sshview

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// idleConn is a TCP connection that never says a word.
type idleConn struct {
	net.Conn
	r    *bufio.Reader
	read int // bytes the server sent
}

func dialIdle(t *testing.T, addr string) *idleConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &idleConn{Conn: c, r: bufio.NewReader(c)}
}

// open reports whether the server holds c: it has sent its version line
// and has not closed it for a while; a connection not yet accepted has
// seen neither, and is waited for (minutes are a hang, not a budget).
func (c *idleConn) open(wait time.Duration) bool {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_ = c.SetReadDeadline(time.Now().Add(wait))
		_, err := c.r.ReadByte()
		var ne net.Error
		switch {
		case err == nil:
			c.read++
		case errors.As(err, &ne) && ne.Timeout():
			if c.read > 0 || time.Now().After(deadline) {
				return true
			}
		default:
			return false // EOF or reset: closed by the server
		}
	}
}

// TestIdleConnectionsBeyondTheLimitAreClosed: with room for 5
// connections waiting to log in, 45 more idle ones are closed as they
// come; the 5 are held; once they go, a viewer logs in.
func TestIdleConnectionsBeyondTheLimitAreClosed(t *testing.T) {
	t.Parallel()
	srv := startView(t, Config{MaxStartups: 5, LoginGrace: 10 * time.Minute})
	addr := srv.Addr().String()
	conns := make([]*idleConn, 50)
	for i := range conns {
		conns[i] = dialIdle(t, addr)
	}
	held := make([]bool, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { held[i] = c.open(time.Second) })
	}
	wg.Wait()
	n := 0
	for _, h := range held {
		if h {
			n++
		}
	}
	if waiting, _ := srv.guard.counts(); n != 5 || waiting != 5 {
		t.Fatalf("%d of 50 idle connections held, %d counted waiting: want 5 (MaxStartups)", n, waiting)
	}
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, "the held connections let go", func() bool { w, _ := srv.guard.counts(); return w == 0 })
	c, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := openView(c, 36, 120, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame", func() bool { return v.out.has("LIVE") })
}

// TestConnectionsWithoutAViewAreClosedAfterTheGrace: a connection that
// never speaks, and one that logs in but opens no view, are closed once
// the grace time has passed; a viewer is not, however long it watches,
// until its view has ended and the grace has passed again.
func TestConnectionsWithoutAViewAreClosedAfterTheGrace(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	srv := startView(t, Config{LoginGrace: grace})
	addr := srv.Addr().String()
	start := time.Now()
	silent := dialIdle(t, addr)
	loggedIn, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer loggedIn.Close()
	viewer, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer viewer.Close()
	v, err := openView(viewer, 36, 120, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame", func() bool { return v.out.has("LIVE") })

	if silent.open(time.Minute) {
		t.Fatal("a silent connection was held a minute")
	}
	if d := time.Since(start); d < grace {
		t.Fatalf("a silent connection was closed after %v, before the grace time %v", d, grace)
	}
	ended := make(chan error, 1)
	go func() { ended <- loggedIn.Wait() }()
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("a logged-in connection without a view was held a minute")
	}

	time.Sleep(5 * grace) // the viewer watches past the grace time
	viewerEnded := make(chan error, 1)
	go func() { viewerEnded <- viewer.Wait() }()
	select {
	case err := <-viewerEnded:
		t.Fatalf("a viewer was disconnected while watching: %v", err)
	default:
	}
	if _, err := v.in.Write([]byte("q")); err != nil { // ends the view, not the connection
		t.Fatal(err)
	}
	select {
	case <-viewerEnded:
	case <-time.After(time.Minute):
		t.Fatal("a connection whose view ended was held a minute")
	}
}

// TestSessionsAreLimited: a connection opens at most MaxSessions
// sessions, and all connections at most MaxViewers; the client reads
// why, and a session that closes makes room.
func TestSessionsAreLimited(t *testing.T) {
	t.Parallel()
	srv := startView(t, Config{MaxSessions: 2, MaxViewers: 3})
	addr := srv.Addr().String()
	a, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 2 {
		if _, err := openView(a, 36, 120, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.NewSession(); err == nil || !strings.Contains(err.Error(), "at most 2 sessions on one connection") {
		t.Fatalf("a third session on one connection: %v", err)
	}
	b, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	third, err := openView(b, 36, 120, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewSession(); err == nil || !strings.Contains(err.Error(), "this view has 3 viewers already") {
		t.Fatalf("a fourth viewer: %v", err)
	}
	third.Close()
	waitFor(t, "room for a viewer", func() bool { _, s := srv.guard.counts(); return s == 2 })
	last, err := openView(b, 36, 120, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame", func() bool { return last.out.has("LIVE") })
}

// TestEnvironmentIsBounded: a session keeps at most maxEnv entries of
// the environment its client sends, never the one that names its
// sizes, and still shows the view.
func TestEnvironmentIsBounded(t *testing.T) {
	t.Parallel()
	srv := startView(t, Config{})
	c, err := dial(srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	setenv := func(sess *gossh.Session) error {
		if err := sess.Setenv(sessionEnv, "1"); err == nil {
			return fmt.Errorf("the client set %s", sessionEnv)
		}
		for i := range maxEnv + 10 {
			err := sess.Setenv(fmt.Sprintf("V%d", i), "x")
			if (err == nil) != (i < maxEnv) {
				return fmt.Errorf("entry %d of the environment: %v", i+1, err)
			}
		}
		return nil
	}
	v, err := openView(c, 36, 120, setenv)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a frame", func() bool { return v.out.has("LIVE") })
}
