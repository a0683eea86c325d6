package store

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// In a simulation a network fault is a virtual-time delay or drop on the
// command's trip: the request meets the faults on the way up before it
// runs, the reply those on the way down after. Jitter comes from the run's
// seed, drawn in the order the simulation runs the commands, so the same
// seed and the same faults give the same log.

// Errors a faulty link gives in a simulation, in words that do not depend
// on the host (no addresses).
var (
	errSimReset   = &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	errSimTimeout = &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// SeedLinks seeds the jitter of the run's network faults.
func (s *Store) SeedLinks(seed uint64) {
	s.netFaults.mu.Lock()
	s.netFaults.rng = rand.New(rand.NewPCG(seed, 0x6e6574))
	s.netFaults.mu.Unlock()
}

// jitter is t's delay this time: D ± Jitter.
func (t *netTable) jitter(x Toxic) time.Duration {
	if x.Jitter <= 0 {
		return x.D
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rng == nil {
		t.rng = rand.New(rand.NewPCG(0, 0x6e6574))
	}
	return max(x.D+time.Duration(t.rng.Int64N(int64(2*x.Jitter+1)))-x.Jitter, 0)
}

// toxicsOn are the network faults on the link of ctx's worker to n.
func (n *Node) toxicsOn(ctx context.Context) []Toxic {
	w := WorkerOf(ctx)
	if n.links == nil || w < 0 {
		return nil
	}
	tx, _ := n.links.on(w, n.Index)
	return tx
}

// simulateFaulty is simulate on a link with network faults.
func (n *Node) simulateFaulty(ctx context.Context, do func(context.Context) error, tx []Toxic, what string, cmds []redis.Cmder) error {
	rt := n.rt
	wait := concrete(n.Client).Options().ReadTimeout
	if wait <= 0 {
		wait = 3 * time.Second
	}
	lost := func(t Toxic, after time.Duration) error { // a black hole: the client gives up, or the link closes
		err := error(errSimTimeout)
		if t.D > 0 && t.D < wait {
			wait, err = t.D, io.EOF
		}
		if serr := rt.SleepUntil(ctx, rt.Now()+after+wait); serr != nil {
			err = serr
		}
		return fail(ctx, err, cmds)
	}
	up, down := rt.Latency(), rt.Latency()
	up, ended, end := n.cross(ctx, tx, Up, up, cmds, lost)
	if ended {
		return end
	}
	if err := rt.Trip(ctx, up, what); err != nil {
		return fail(ctx, err, cmds)
	}
	if n.Paused() {
		if err := rt.Block(ctx, func() bool { return !n.Paused() }); err != nil {
			return fail(ctx, err, cmds)
		}
	}
	if n.Down() {
		return n.refuse(ctx, slowClose(tx, Down), errRefused, cmds)
	}
	n.sync()
	n.tickReplica()
	err := do(context.WithValue(context.WithoutCancel(ctx), commandKey{}, true))
	if n.replicating.Load() {
		for _, c := range cmds {
			n.record(c)
		}
	}
	// The command ran; its reply crosses the way down.
	down, ended, end = n.cross(ctx, tx, Down, down, cmds, lost)
	if ended {
		return end
	}
	if serr := rt.SleepUntil(ctx, rt.Now()+down); serr != nil {
		return fail(ctx, serr, cmds)
	}
	return err
}

// cross takes a request (d Up) or its reply (Down) through the faults tx
// of its way: how long it takes, from the network's latency, or the error
// the commands end with when a fault stops it (ended). lost is a black
// hole's end, after the time given.
func (n *Node) cross(ctx context.Context, tx []Toxic, d Dir, latency time.Duration, cmds []redis.Cmder, lost func(Toxic, time.Duration) error) (time.Duration, bool, error) {
	w, took, size := WorkerOf(ctx), latency, replyBytes
	if d == Up {
		size = requestBytes
	}
	for _, t := range tx {
		if t.Dir&d == 0 && (d != Up || t.Kind != ToxicPartition) {
			continue
		}
		switch t.Kind {
		case ToxicPartition:
			return 0, true, n.refuse(ctx, took, errRefused, cmds)
		case ToxicReset:
			return 0, true, n.refuse(ctx, took+t.D, errSimReset, cmds)
		case ToxicTimeout:
			after := time.Duration(0)
			if d == Up {
				after = took
			}
			return 0, true, lost(t, after)
		case ToxicLimitData:
			if n.links.spend(w, n.Index, d, size(cmds)) {
				return 0, true, n.refuse(ctx, took, io.EOF, cmds)
			}
		case ToxicLatency:
			took += n.links.jitter(t)
		case ToxicBandwidth:
			took += perRate(size(cmds), t.Rate)
		}
	}
	return took, false, nil
}

// refuse fails cmds with err after d of the simulation's time.
func (n *Node) refuse(ctx context.Context, d time.Duration, err error, cmds []redis.Cmder) error {
	if serr := n.rt.SleepUntil(ctx, n.rt.Now()+d); serr != nil {
		err = serr
	}
	return fail(ctx, err, cmds)
}

// slowClose is how late a closed connection is seen in direction d.
func slowClose(tx []Toxic, d Dir) time.Duration {
	for _, t := range tx {
		if t.Kind == ToxicSlowClose && t.Dir&d != 0 {
			return t.D
		}
	}
	return 0
}

func perRate(n, rate int64) time.Duration {
	return time.Duration(float64(n) / float64(rate) * float64(time.Second))
}

// requestBytes is the size of cmds as RESP puts them on the wire.
func requestBytes(cmds []redis.Cmder) int64 {
	var n int64
	for _, c := range cmds {
		args := c.Args()
		n += int64(len(fmt.Sprint(len(args)))) + 3
		for _, a := range args {
			l := len(fmt.Sprint(a))
			n += int64(len(fmt.Sprint(l))+3) + int64(l) + 2
		}
	}
	return n
}

// replyBytes is about the size of cmds' replies on the wire: their values
// as text and a RESP frame each.
func replyBytes(cmds []redis.Cmder) int64 {
	var n int64
	for _, c := range cmds {
		var v any = ""
		switch c := c.(type) {
		case *redis.Cmd:
			v = c.Val()
		case *redis.StringCmd:
			v = c.Val()
		case *redis.IntCmd:
			v = c.Val()
		case *redis.BoolCmd:
			v = c.Val()
		case *redis.StatusCmd:
			v = c.Val()
		case *redis.DurationCmd:
			v = c.Val()
		}
		n += int64(len(fmt.Sprint(v))) + 5
	}
	return n
}
