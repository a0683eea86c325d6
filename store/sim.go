package store

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/store/simredis"
)

// Simulate hands the run on the embedded store to rt: its clock becomes
// rt's, and every command an actor sends is a step of the simulation — a
// trip to the server and back on rt's network, run at once against the
// embedded server at the simulated time. It is called before the run
// starts; it does nothing on real servers.
func (s *Store) Simulate(rt *sim.Runtime) bool { return s.SimulateWith(rt, 1<<20) }

// SimulateWith is Simulate with room for conns connections held at once
// per node: a command holds one only while it runs (atomically), a WATCH
// across steps, so a run needs about one per worker. Making room costs
// time at the start of each run, which a sweep of many runs feels.
func (s *Store) SimulateWith(rt *sim.Runtime, conns int) bool {
	if s.kind != Embedded {
		return false
	}
	for _, n := range s.nodes {
		// The idle node's time and its replica move with the commands
		// now, not with a ticker of the host's.
		close(n.stop)
		<-n.done
		n.stop, n.done = make(chan struct{}), make(chan struct{})
		close(n.done)
	}
	s.clock.Simulate(rt)
	for _, n := range s.nodes {
		n.rt = rt
		n.many = len(s.nodes) > 1
		n.simClient(conns)
		// The simulation's time starts at zero, whenever the store was
		// opened: so does the server's.
		n.mu.Lock()
		n.synced = 0
		n.mini.SetTime(n.wall(0))
		n.mu.Unlock()
		n.replMu.Lock()
		if n.repl != nil {
			n.repl.mini.SetTime(n.wall(0))
		}
		n.replMu.Unlock()
	}
	return true
}

// Simulated reports whether the run on the store is simulated.
func (s *Store) Simulated() bool { return s.clock.Simulated() }

// errRefused is what a command to a stopped node gets in a simulation: the
// words a dial to a closed port gets, without the port (which differs from
// run to run).
var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

// simulate runs one command (or one pipeline) of an actor: it travels,
// waits at a paused server, and runs at once on the server at the
// simulated time.
func (n *Node) simulate(ctx context.Context, do func(context.Context) error, cmds ...redis.Cmder) error {
	rt := n.rt
	// The request and its reply cross the network: the command runs on
	// the server as the reply leaves, which arrives at once.
	what := ""
	if rt.Steered() {
		what = n.describe(cmds, n.many)
	}
	if tx := n.toxicsOn(ctx); len(tx) > 0 {
		return n.simulateFaulty(ctx, do, tx, what, cmds)
	}
	if err := rt.Trip(ctx, rt.Latency()+rt.Latency(), what); err != nil {
		return fail(ctx, err, cmds)
	}
	if n.Paused() {
		if err := rt.Block(ctx, func() bool { return !n.Paused() }); err != nil {
			return fail(ctx, err, cmds)
		}
	}
	if n.Down() {
		return fail(ctx, errRefused, cmds)
	}
	n.sync()
	n.tickReplica()
	// The command itself runs with no deadline of the host's: nothing
	// else runs meanwhile, and the embedded server answers at once.
	err := do(context.WithValue(context.WithoutCancel(ctx), commandKey{}, true))
	if n.replicating.Load() {
		for _, c := range cmds {
			n.record(c)
		}
	}
	return err
}

// fail sets err on cmds and returns it; a simulated timeout reads as one.
func fail(ctx context.Context, err error, cmds []redis.Cmder) error {
	if errors.Is(err, context.Canceled) && clock.TimedOut(ctx) {
		err = context.DeadlineExceeded
	}
	for _, c := range cmds {
		c.SetErr(err)
	}
	return err
}

// promoteInPlace is a failover in a simulation: the replica's data takes
// the primary's place on the same server, so no connection breaks (a
// broken one tells its error in words that depend on the host), and the
// old primary's data is gone. faultMu is held.
func (n *Node) promoteInPlace(r *replica) {
	now := n.clock.Now()
	n.mu.Lock()
	r.mini.SetTime(n.wall(n.synced))
	n.mu.Unlock()
	var keep []effect
	for _, k := range r.mini.Keys() {
		keep = append(keep, captureFrom(r.mini, now, k))
	}
	n.mini.FlushAll()
	into := &replica{mini: n.mini}
	for _, e := range keep {
		into.apply(e, now)
	}
	n.stopped = false
	n.attach(r.lag)
}

// startInPlace brings a simulated node back up: its server was never
// closed (its clients were refused while it was down). faultMu is held.
func (n *Node) startInPlace(keepData bool) {
	if !keepData {
		n.mini.FlushAll()
	}
	n.stopped = false
}

// simClient gives the node a client of the simulation's: its connections
// are in memory, as many as the actors hold at once (a WATCH holds one
// across steps), so none ever waits for another in the host's time.
func (n *Node) simClient(conns int) {
	old := n.Client
	o := *concrete(old).Options()
	o.PoolSize = max(conns, 1)
	o.MaxActiveConns = 0
	o.Dialer = func(context.Context, string, string) (net.Conn, error) { return n.pipe(), nil }
	c := redis.NewClient(&o)
	c.AddHook(gateHook{})
	c.AddHook(syncHook{n})
	n.Client = c
	_ = old.Close()
}

// pipe is a simulated run's connection to its embedded server.
func (n *Node) pipe() net.Conn {
	n.mu.Lock()
	m := n.mini
	if n.lua == nil || !n.lua.Of(m) {
		n.lua = simredis.NewLua(m)
	}
	lr := n.lua
	n.mu.Unlock()
	return simredis.NewConn(m.Server(), lr)
}

type commandKey struct{}

// inCommand reports whether ctx is a simulated command's own: what the
// client sends on its way (a new connection's handshake) is part of that
// step, not a step of its own.
func inCommand(ctx context.Context) bool { return ctx.Value(commandKey{}) != nil }

// Unreachable returns n clients that reach no server: how a partitioned
// worker sees the nodes on the other side. In a simulation each command
// costs its trip and is refused, with no socket; in real time each dials a
// closed port.
func (s *Store) Unreachable(n int) []Redis {
	cs := make([]Redis, n)
	for i := range cs {
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 20 * time.Millisecond,
			MaxRetries: -1, DialerRetries: 1, Protocol: 2, DisableIdentity: true})
		c.AddHook(gateHook{})
		if rt := s.simulation(); rt != nil {
			c.AddHook(cutOffHook{rt})
		}
		cs[i] = c
	}
	return cs
}

// simulation is the runtime the store's clock is handed to, if any.
func (s *Store) simulation() *sim.Runtime {
	for _, n := range s.nodes {
		if n.rt != nil {
			return n.rt
		}
	}
	return nil
}

// cutOffHook refuses every command of an unreachable client, after the
// simulated trip a refused dial costs.
type cutOffHook struct{ rt *sim.Runtime }

func (h cutOffHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h cutOffHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.rt.Acting(ctx) {
			return next(ctx, cmd)
		}
		if err := h.rt.SleepUntil(ctx, h.rt.Now()+h.rt.Latency()); err != nil {
			return fail(ctx, err, []redis.Cmder{cmd})
		}
		return fail(ctx, errRefused, []redis.Cmder{cmd})
	}
}

func (h cutOffHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.rt.Acting(ctx) {
			return next(ctx, cmds)
		}
		if err := h.rt.SleepUntil(ctx, h.rt.Now()+h.rt.Latency()); err != nil {
			return fail(ctx, err, cmds)
		}
		return fail(ctx, errRefused, cmds)
	}
}
