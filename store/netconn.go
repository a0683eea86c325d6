package store

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// In real time a network fault acts on real connections. Once a fault has
// reached a node, each worker talks to it on a client of its own, and each
// of that client's connections is a faulty link: every write (a request)
// and every read (a reply) crosses the faults in force on the worker's link
// to the node at that moment, in the process, on the real bytes. Dialing
// stays the client's own (a stopped server still refuses in its own
// words); a partition refuses the dial itself.
//
// This is a proxy without a second socket: toxiproxy's model (a list of
// toxics per link and direction, changed at run time) applied where the
// bytes leave and arrive.

// arm makes the node route each worker's commands on the worker's own
// links from now on.
func (n *Node) arm() error {
	n.linkMu.Lock()
	defer n.linkMu.Unlock()
	if n.armed {
		return nil
	}
	if n.Client == nil {
		return errors.New("the node has no client")
	}
	n.armed = true
	concrete(n.Client).AddHook(routeHook{n})
	return nil
}

// Armed reports whether the node's workers talk to it on links of their own.
func (n *Node) Armed() bool {
	n.linkMu.Lock()
	defer n.linkMu.Unlock()
	return n.armed
}

// dialLink opens a connection of worker w's own link before a fault is
// put on it: the client's handshake on a new connection (go-redis sends
// HELLO and waits for its answer) then does not cross the fault, which
// acts on the worker's commands from the first, as the story means.
// A node that does not answer is left to the commands to find.
func (n *Node) dialLink(w int32) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = n.link(w).Ping(ctx).Err()
}

// link is worker w's own client of the node, made at first use.
func (n *Node) link(w int32) Redis {
	n.linkMu.Lock()
	defer n.linkMu.Unlock()
	if c := n.linked[w]; c != nil {
		return c
	}
	o := *concrete(n.Client).Options()
	inner := o.Dialer
	if inner == nil {
		inner = redis.NewDialer(&o)
	}
	links, node := n.links, n.Index
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if partitioned(links, w, node) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		}
		c, err := inner(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &faultyConn{Conn: c, links: links, worker: w, node: node, real: n.clock.Real, done: make(chan struct{})}, nil
	}
	c := redis.NewClient(&o)
	c.AddHook(gateHook{})
	if n.embedded {
		c.AddHook(syncHook{n})
	} else {
		c.AddHook(refusalHook{&n.refused})
		if n.net != nil {
			c.AddHook(netHook{n.net})
		}
	}
	if n.linked == nil {
		n.linked = map[int32]Redis{}
	}
	n.linked[w] = c
	return c
}

// closeLinks closes the workers' own clients.
func (n *Node) closeLinks() {
	n.linkMu.Lock()
	defer n.linkMu.Unlock()
	for _, c := range n.linked {
		_ = c.Close()
	}
	n.linked = nil
}

// ClientsFor are the clients worker w's locks use: on nodes a network
// fault has reached, the worker's own; elsewhere the shared ones.
func (s *Store) ClientsFor(w int32) []Redis {
	cs := s.Clients()
	for i, n := range s.nodes {
		if w >= 0 && n.Armed() {
			cs[i] = n.link(w)
		}
	}
	return cs
}

func partitioned(links *netTable, w int32, node int) bool {
	tx, _ := links.on(w, node)
	for _, t := range tx {
		if t.Kind == ToxicPartition {
			return true
		}
	}
	return false
}

// routeHook sends a worker's commands on the shared client along the
// worker's own link. A transaction (MULTI … EXEC) and WATCH stay on the
// connection they were given, which WATCH needs.
type routeHook struct{ n *Node }

func (routeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h routeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		w := WorkerOf(ctx)
		if w < 0 || sticky(cmd.Name()) {
			return next(ctx, cmd)
		}
		return h.n.link(w).Process(ctx, cmd)
	}
}

func (h routeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		w := WorkerOf(ctx)
		if w < 0 || len(cmds) == 0 || sticky(cmds[0].Name()) {
			return next(ctx, cmds)
		}
		_, err := h.n.link(w).Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range cmds {
				_ = p.Process(ctx, c)
			}
			return nil
		})
		return err
	}
}

func sticky(name string) bool {
	switch strings.ToLower(name) {
	case "multi", "exec", "watch", "unwatch", "discard":
		return true
	}
	return false
}

// faultyConn is one connection of a worker's link to a node.
type faultyConn struct {
	net.Conn
	links   *netTable
	worker  int32
	node    int
	real    func(time.Duration) time.Duration // run time to the host's
	mu      sync.Mutex
	rdl     time.Time // the read deadline the client set
	once    sync.Once
	closeIn sync.Once // a timeout's close, set once
	done    chan struct{}
}

var (
	errReset   = &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	errTimeout = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
)

func (c *faultyConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *faultyConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

// wait sleeps d of run time, or until the connection closes or the read
// deadline passes (false).
func (c *faultyConn) wait(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	real := c.real(d)
	c.mu.Lock()
	dl := c.rdl
	c.mu.Unlock()
	late := !dl.IsZero() && time.Until(dl) < real
	if late {
		real = max(time.Until(dl), 0)
	}
	t := time.NewTimer(real)
	defer t.Stop()
	select {
	case <-t.C:
		return !late
	case <-c.done:
		return false
	}
}

// cross applies the toxics in force in direction d to n bytes: whether
// they are dropped (a black hole), and the error that ends the
// connection, if any; meanwhile it waits what they delay.
func (c *faultyConn) cross(d Dir, n int) (drop bool, err error) {
	tx, _ := c.links.on(c.worker, c.node)
	var delay time.Duration
	for _, t := range tx {
		if t.Dir&d == 0 && t.Kind != ToxicPartition {
			continue
		}
		switch t.Kind {
		case ToxicPartition:
			c.reset()
			return false, errReset
		case ToxicReset:
			c.wait(t.D)
			c.reset()
			return false, errReset
		case ToxicTimeout:
			if t.D > 0 {
				c.closeIn.Do(func() { time.AfterFunc(c.real(t.D), func() { c.Close() }) })
			}
			return true, nil
		case ToxicLimitData:
			if c.links.spend(c.worker, c.node, d, int64(n)) {
				c.Close()
				return false, io.EOF
			}
		case ToxicLatency:
			delay += t.D
			if t.Jitter > 0 {
				delay += time.Duration(rand.Int64N(int64(2*t.Jitter+1))) - t.Jitter
			}
		case ToxicBandwidth:
			delay += time.Duration(float64(n) / float64(t.Rate) * float64(time.Second))
		}
	}
	if !c.wait(delay) {
		return false, errTimeout
	}
	return false, nil
}

// Write sends a request across the faults on the way up; a black hole
// swallows it (the reply never comes).
func (c *faultyConn) Write(p []byte) (int, error) {
	drop, err := c.cross(Up, len(p))
	if err != nil {
		return 0, err
	}
	if drop {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// Read takes a reply across the faults on the way down; a black hole
// swallows it, and the client waits for its read deadline.
func (c *faultyConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 {
			drop, ferr := c.cross(Down, n)
			if ferr != nil {
				return 0, ferr
			}
			if drop {
				continue
			}
		}
		if errors.Is(err, io.EOF) { // the server closed: a slow close reaches the worker late
			tx, _ := c.links.on(c.worker, c.node)
			c.wait(slowClose(tx, Down))
		}
		return n, err
	}
}

// reset closes the connection with a RST, as a reset peer does.
func (c *faultyConn) reset() {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// Close closes the connection; a slow close reaches the server late.
func (c *faultyConn) Close() error {
	first := false
	c.once.Do(func() { close(c.done); first = true })
	if !first {
		return nil
	}
	tx, _ := c.links.on(c.worker, c.node)
	if d := slowClose(tx, Up); d > 0 {
		go func() {
			time.Sleep(c.real(d))
			_ = c.Conn.Close()
		}()
		return nil
	}
	return c.Conn.Close()
}
