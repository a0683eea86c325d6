package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/store/simredis"
	"github.com/locklab/locklab/store/spawn"
)

// Node is one Redis server of a run and the client that talks to it.
type Node struct {
	Index  int
	Addr   string // host:port[/db], never with a password
	Client Redis  // a *redis.Client

	mini   *miniredis.Miniredis // nil on a real server
	at     string               // where mini listens now; mu guards it
	clock  *Clock
	base   time.Time // the embedded server's wall time at virtual zero
	mu     sync.Mutex
	synced time.Duration
	skew   Skew // the node's clock against the run's (jumps, slews); mu guards it
	stop   chan struct{}
	done   chan struct{}

	embedded    bool
	wallTime    bool   // the node's time is this machine's wall clock (Config.WallTime)
	many        bool   // one of several nodes: a described command names it
	url         string // a real server's URL as given: for Scrub only
	refused     atomic.Pointer[error]
	net         *safetyNet // a real node's; nil when embedded
	replMu      sync.Mutex
	repl        *replica
	replicating atomic.Bool

	faultMu sync.Mutex
	paused  chan struct{} // closed on Resume
	stopped bool

	topo *spawn.Topology // the spawned servers this node is one of; nil otherwise

	rt *sim.Runtime // set when the run is simulated

	links  *netTable // the run's network faults
	linkMu sync.Mutex
	linked map[int32]Redis // real time, armed: each worker's own client, its connections faulty links
	armed  bool            // the routing hook is on Client
	lua    *simredis.Lua   // runs the simulated run's scripts; mu guards it
}

// epoch is the embedded servers' wall time at virtual zero: a fixed instant,
// so TIME and PEXPIREAT are the same in every run.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// syncEvery is how often an idle embedded node's time catches up with the
// clock; every command also catches it up as it is sent (timedConn), so
// expiry is exact when a command arrives.
const syncEvery = 2 * time.Millisecond

func (s *Store) openEmbedded(cfg Config) error {
	s.kind = Embedded
	speed := cfg.Speed
	if speed == 0 {
		speed = 1
	}
	if cfg.Paused {
		speed = 0
	}
	s.clock = NewClock(speed)
	n := max(cfg.Nodes, 1)
	for i := range n {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return fmt.Errorf("store: start embedded node %d: %w", i, err)
		}
		m.ClockTTL(true)
		node := &Node{Index: i, Addr: m.Addr(), at: m.Addr(), mini: m, embedded: true, clock: s.clock, base: epoch, wallTime: cfg.WallTime,
			stop: make(chan struct{}), done: make(chan struct{})}
		m.SetTime(node.wall(0))
		// One dial attempt: an in-process server that refuses is closed, not busy.
		o := clientOptions(&redis.Options{Addr: m.Addr(), DialerRetries: 1}, cfg)
		// An in-process server is never far: a dial or a reply that takes
		// long is a busy machine's scheduler, not a lost server. (A node
		// the user paused holds commands on purpose; the run's own
		// deadlines still bound them.)
		o.DialTimeout = max(o.DialTimeout, embeddedPatience)
		o.ReadTimeout, o.WriteTimeout = embeddedPatience, embeddedPatience
		// Dial wherever the node listens now: a node that comes back after
		// a fault listens on a fresh port if its old one was taken meanwhile.
		d := net.Dialer{Timeout: o.DialTimeout, KeepAlive: 5 * time.Minute}
		o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, node.listening())
			if err != nil {
				return nil, err
			}
			return &timedConn{Conn: c, n: node}, nil
		}
		c := redis.NewClient(o)
		c.AddHook(gateHook{})
		c.AddHook(syncHook{node})
		node.Client = c
		s.nodes = append(s.nodes, node)
		if cfg.ReplicaLag > 0 {
			node.attach(cfg.ReplicaLag)
		}
		go node.follow()
	}
	return nil
}

func clientOptions(o *redis.Options, cfg Config) *redis.Options {
	o.ContextTimeoutEnabled = true
	o.MaxRetries = -1 // a lock command must never be silently re-sent
	o.DialTimeout = defaultConnectTimeout(cfg)
	if cfg.PoolSize > 0 {
		o.PoolSize = cfg.PoolSize
	}
	o.DisableIdentity = true
	// RESP2: locklab needs no push notifications, and RESP3 makes go-redis
	// peek the socket for them before every command.
	o.Protocol = 2
	return o
}

// URLClientOptions keeps what a URL set (pool_size, dial_timeout,
// protocol, read_timeout, …) and fills in locklab's defaults for the rest.
func URLClientOptions(o *redis.Options, cfg Config) *redis.Options {
	pool, dial, proto := o.PoolSize, o.DialTimeout, o.Protocol
	clientOptions(o, cfg)
	if o.PipelinePoolSize == 0 {
		// Pipelines share the main pool: pool_size caps every connection
		// locklab opens (go-redis's own pipeline pool would add ten).
		o.PipelinePoolSize = -1
	}
	if pool > 0 {
		o.PoolSize = pool
	}
	if dial != 0 {
		o.DialTimeout = dial
	}
	if proto != 0 {
		o.Protocol = proto
	}
	return o
}

// listening is where an embedded node's server listens now.
func (n *Node) listening() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.at
}

// listened records where an embedded node's server listens now.
func (n *Node) listened(m *miniredis.Miniredis) {
	n.mu.Lock()
	n.at = m.Addr()
	n.mu.Unlock()
}

// listenAgain starts m on addr, or, if something took addr while m was
// down (another server, a client's local port), on a fresh port: the
// node's clients dial wherever it listens.
func listenAgain(m *miniredis.Miniredis, addr string) error {
	if err := m.StartAddr(addr); err == nil {
		return nil
	}
	return m.StartAddr("127.0.0.1:0")
}

// embeddedPatience is the least time a client waits to connect to an
// embedded node, and how long it waits for a reply without a deadline of
// its own.
const embeddedPatience = 15 * time.Second

func defaultConnectTimeout(cfg Config) time.Duration {
	if cfg.ConnectTimeout > 0 {
		return cfg.ConnectTimeout
	}
	return 2 * time.Second
}

// sync brings the embedded server's time up to the clock. Time only moves
// forward, under the node's mutex, so no TTL is counted down twice.
func (n *Node) sync() {
	n.mu.Lock()
	if v := n.clock.Now(); v > n.synced || n.synced < 0 || n.wallTime {
		n.synced = max(v, n.synced)
		n.mini.SetTime(n.wall(v))
	}
	n.mu.Unlock()
}

// FollowWallClock makes the embedded nodes' time this machine's wall
// clock from now on, as Config.WallTime does from the start: for a run
// whose lock sends absolute deadlines read from the wall clock.
func (s *Store) FollowWallClock() {
	for _, n := range s.nodes {
		if !n.embedded {
			continue
		}
		n.mu.Lock()
		n.wallTime = true
		n.mu.Unlock()
		n.sync()
	}
}

// wall is the embedded server's time at virtual time v: the run's, moved
// by the node's skew. mu is held.
func (n *Node) wall(v time.Duration) time.Time {
	if n.wallTime {
		return time.Now().Add(n.skew.At(v))
	}
	return n.base.Add(v + n.skew.At(v))
}

// follow keeps an idle embedded node's time with the clock until close.
func (n *Node) follow() {
	defer close(n.done)
	t := time.NewTicker(syncEvery)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			n.sync()
			if n.replicating.Load() {
				n.tickReplica()
			}
		}
	}
}

// Embedded reports whether the node is an in-process server.
func (n *Node) Embedded() bool { return n.embedded }

func (n *Node) close() error {
	var err error
	n.closeLinks()
	if n.Client != nil {
		err = n.Client.Close()
	}
	if n.embedded {
		n.Resume()
		close(n.stop)
		<-n.done
		if !n.Down() || n.rt != nil {
			n.mini.Close()
		}
	}
	return err
}

// timedConn is a connection to an embedded node that catches the node's
// time up as each command is sent, whatever client sends it: a library
// with a client of its own (rueidislock) passes no go-redis hook, and
// without this its commands were judged on a time up to a tick
// (syncEvery, more on a busy machine) behind, so a key with a wall-clock
// deadline lived on past it.
type timedConn struct {
	net.Conn
	n *Node
}

// NetConn and SyscallConn let go-redis's health check see the socket (a
// pooled connection to a node that went down is found closed).
func (c *timedConn) NetConn() net.Conn { return c.Conn }

func (c *timedConn) SyscallConn() (syscall.RawConn, error) {
	if s, ok := c.Conn.(syscall.Conn); ok {
		return s.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

func (c *timedConn) Write(b []byte) (int, error) {
	c.n.sync()
	return c.Conn.Write(b)
}

// syncHook catches an embedded node's time up before every command.
type syncHook struct{ n *Node }

func (h syncHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h syncHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.n.rt != nil && !inCommand(ctx) && h.n.rt.Acting(ctx) {
			return h.n.simulate(ctx, func(ctx context.Context) error { return next(ctx, cmd) }, cmd)
		}
		h.n.sync()
		err := next(ctx, cmd)
		if h.n.replicating.Load() {
			h.n.record(cmd)
		}
		return err
	}
}

func (h syncHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.n.rt != nil && !inCommand(ctx) && h.n.rt.Acting(ctx) {
			return h.n.simulate(ctx, func(ctx context.Context) error { return next(ctx, cmds) }, cmds...)
		}
		h.n.sync()
		err := next(ctx, cmds)
		if h.n.replicating.Load() {
			for _, c := range cmds {
				h.n.record(c)
			}
		}
		return err
	}
}

func (s *Store) openReal(ctx context.Context, cfg Config) error {
	s.kind = Real
	slowmo := cfg.Slowmo
	if slowmo <= 0 {
		slowmo = 1
	}
	s.clock = NewScaledClock(slowmo)
	if !cfg.Origin.IsZero() {
		s.clock.StartAt(cfg.Origin)
	}
	for i, raw := range cfg.URLs {
		opt, err := ParseURL(raw)
		if err != nil {
			return err
		}
		if opt.MaxRetries > 0 {
			return &URLError{msg: fmt.Sprintf("invalid Redis URL %s: max_retries: locklab never re-sends a lock command (the lock strategy retries); leave the option out", Redact(raw))}
		}
		addr := Scrub(Addr(opt), raw)
		node := &Node{Index: i, Addr: addr, clock: s.clock, url: raw}
		opt = URLClientOptions(opt, cfg)
		var c *redis.Client
		if s.topo != nil {
			node.topo = s.topo
			c = spawn.Client(s.topo, i, opt, func(c net.Conn) net.Conn { return &tellingConn{Conn: c} })
		} else {
			TellingDialer(opt)
			c = redis.NewClient(opt)
		}
		c.AddHook(gateHook{})
		c.AddHook(refusalHook{&node.refused})
		node.Client = c
		s.nodes = append(s.nodes, node)
		timeout := c.Options().DialTimeout
		if timeout <= 0 {
			timeout = defaultConnectTimeout(cfg)
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err = node.Client.Ping(pctx).Err()
		cancel()
		if err != nil {
			return &ConnectError{Addr: addr, Err: err, raw: raw}
		}
		node.net = newNet(node, s.prefix, s.owner)
		c.AddHook(netHook{node.net})
		pctx, cancel = context.WithTimeout(ctx, timeout)
		err = node.net.start(pctx)
		cancel()
		if err != nil {
			node.net = nil
			return &ConnectError{Addr: addr, Err: err, raw: raw}
		}
	}
	return nil
}
