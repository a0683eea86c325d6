package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/store"
)

// FaultKind is a fault that can be injected into a running scenario.
type FaultKind uint8

const (
	FaultCrash       FaultKind = iota // the worker dies holding what it holds
	FaultPause                        // a stop-the-world pause of the worker (its watchdog too)
	FaultNodeStop                     // stop the node, or start it again with its data
	FaultNodeRestart                  // stop the node and start it empty (no persistence)
	FaultNodePause                    // pause the node, or resume it
	FaultClockJump                    // the node's clock jumps forward
	FaultFailover                     // the node's replica, which missed the last writes, takes over
	FaultNet                          // a network fault on a worker's link to a node (Net); D: how long it lasts
)

// Fault says what to inject, and where.
type Fault struct {
	Kind   FaultKind
	Worker int32
	Node   int
	D      time.Duration // pause or jump; 0: 1.5×TTL for a pause, the TTL for a jump
	// Net is a network fault's kind and settings; Worker −1 aims it at
	// every worker, Node −1 at every node.
	Net  store.Toxic
	Lift bool // a network fault: end those of Net's kind on the links named
}

// Timed is a fault planned for an instant of the run's time.
type Timed struct {
	At time.Duration
	Fault
	// Pressed, for a fault pressed during a simulated run, is where it
	// landed: a replay lands it there again, not on a timer at At.
	Pressed *sim.Point
}

// scheduled injects a planned fault; one that cannot happen then (its
// worker has finished) is recorded as such.
func (r *Run) scheduled(f Timed) {
	if _, err := r.inject(f.Fault); err != nil {
		r.env.Emit(event.Event{Kind: event.KindBeat, Code: "fault", Msg: "planned fault not injected: " + err.Error()})
	}
}

// ErrRunOver says the run has ended: nothing is left to break.
var ErrRunOver = errors.New("the run has ended")

// Inject breaks something in the running scenario, now, and records it in
// the event log like the scenario's own faults. The string says what
// happened; an error says why nothing did.
func (r *Run) Inject(f Fault) (string, error) {
	select {
	case <-r.done:
		return "", ErrRunOver
	default:
	}
	if r.rt == nil {
		return r.inject(f)
	}
	// In a simulation the fault lands between two steps, at the simulated
	// time then, like an actor's own.
	type result struct {
		msg string
		err error
	}
	got := make(chan result, 1)
	r.rt.Do(func() {
		at, t := r.rt.Landing()
		msg, err := r.inject(f)
		if err == nil {
			r.pressedMu.Lock()
			r.pressed = append(r.pressed, Timed{At: t, Fault: f, Pressed: &at})
			r.pressedMu.Unlock()
		}
		got <- result{msg, err}
	})
	select {
	case res := <-got:
		return res.msg, res.err
	case <-r.rt.Done():
		return "", ErrRunOver
	}
}

func (r *Run) inject(f Fault) (string, error) {
	e := r.env
	d := f.D
	switch f.Kind {
	case FaultNet:
		return r.injectNet(f)
	case FaultCrash, FaultPause:
		w := e.lookup(f.Worker)
		switch {
		case w == nil:
			return "", fmt.Errorf("%s has not started", check.WorkerName(f.Worker))
		case w.crashed.Load():
			return "", fmt.Errorf("%s has crashed already", check.WorkerName(f.Worker))
		case w.done.Load():
			return "", fmt.Errorf("%s has finished", check.WorkerName(f.Worker))
		}
		if f.Kind == FaultCrash {
			w.Emit(event.Event{Kind: event.KindCrash, Msg: "crashed by an injected fault; its lock stays until the TTL"})
			w.crashed.Store(true)
			w.cancel(lock.ErrCrashed)
			return check.WorkerName(w.ID) + " crashed", nil
		}
		if d <= 0 {
			d = e.Params.TTL.D() * 3 / 2
		}
		if !w.beginPause(d, "stop-the-world pause (injected)") {
			return "", fmt.Errorf("%s is paused already", check.WorkerName(w.ID))
		}
		r.bg.Go(e.ctx, "injected pause", func(ctx context.Context) {
			_ = e.Clock().Sleep(ctx, d)
			w.endPause(d)
		})
		return fmt.Sprintf("%s paused for %v", check.WorkerName(w.ID), d), nil
	}
	nodes := e.Store.Nodes()
	if f.Node < 0 || f.Node >= len(nodes) {
		return "", fmt.Errorf("there is no node %d: this run has %d", f.Node, len(nodes))
	}
	n := nodes[f.Node]
	if !n.Embedded() && !n.Spawned() {
		return "", fmt.Errorf("not available on a real server locklab did not start: node faults need the embedded store or --topology (Redis can be stopped or paused by hand: redis-cli DEBUG SLEEP, CLIENT PAUSE)")
	}
	var kind string
	switch f.Kind {
	case FaultNodeStop:
		kind = "down"
		if n.Down() {
			kind = "up"
		}
	case FaultNodeRestart:
		kind = "restart"
	case FaultNodePause:
		kind = "pause"
		if n.Paused() {
			kind = "resume"
		}
	case FaultClockJump:
		kind = "jump"
		if d <= 0 {
			d = e.Params.TTL.D()
		}
	case FaultFailover:
		kind = "failover"
	default:
		return "", fmt.Errorf("unknown fault %d", f.Kind)
	}
	ev, err := fault(e, n, kind, d)
	if err != nil {
		return "", errors.New(ev.Msg)
	}
	return ev.Msg, nil
}

// lookup is worker i, if it has been made.
func (e *Env) lookup(i int32) *Worker {
	e.mu.Lock()
	defer e.mu.Unlock()
	if i < 0 || int(i) >= len(e.workers) {
		return nil
	}
	return e.workers[i]
}

// fault injects a node fault and records it; on a real server it says
// what is not available.
func fault(env *Env, n *store.Node, kind string, d time.Duration) (event.Event, error) {
	var err error
	ev := event.Event{Node: int16(n.Index), Has: event.HasNode}
	switch kind {
	case "down":
		err, ev.Kind, ev.Msg = n.Stop(), event.KindNodeDown, fmt.Sprintf("node %d stopped", n.Index)
		if n.Spawned() {
			ev.Msg = fmt.Sprintf("node %d stopped: its redis-server killed (SIGKILL)", n.Index)
		}
	case "up":
		err, ev.Kind, ev.Msg = n.Start(true), event.KindNodeUp, fmt.Sprintf("node %d back, with its data", n.Index)
		if !n.KeepsData() {
			ev.Msg = fmt.Sprintf("node %d back, empty: a spawned redis-server has no persistence", n.Index)
		}
	case "pause":
		err, ev.Kind, ev.Msg = n.Pause(), event.KindNodeDown, fmt.Sprintf("node %d paused: it holds every command until resumed", n.Index)
		if n.Spawned() {
			ev.Msg = fmt.Sprintf("node %d paused (SIGSTOP): it holds every command until resumed", n.Index)
		}
	case "resume":
		ev.Kind, ev.Msg = event.KindNodeUp, fmt.Sprintf("node %d resumed", n.Index)
		if n.Spawned() {
			// Said before SIGCONT: a resumed server answers what waited
			// at once, and its answers come after this in the log.
			ev.Msg += " (SIGCONT)"
			env.Emit(ev)
			n.Resume()
			env.announceServers()
			return ev, nil
		}
		n.Resume()
	case "jump":
		err, ev.Kind, ev.Msg = n.JumpClock(d), event.KindBeat, fmt.Sprintf("node %d's clock jumped %v forward", n.Index, d)
	case "slew":
		err, ev.Kind = n.SlewClock(d, d), event.KindBeat
		ev.Msg = fmt.Sprintf("node %d's clock slews %v forward over %v: it runs twice as fast until then", n.Index, d, d)
	case "failover":
		var said string
		if said, err = n.FailOver(); err == nil {
			ev.Kind, ev.Msg = event.KindFailover, said
			if n.Spawned() {
				ev.Msg = fmt.Sprintf("node %d failed over: %s", n.Index, said)
			}
		} else {
			ev.Kind, ev.Msg = event.KindBeat, "no failover"
		}
	case "restart":
		if err = n.Stop(); err == nil {
			err = n.Start(false)
		}
		ev.Kind, ev.Msg = event.KindNodeUp, fmt.Sprintf("node %d restarted, empty: it had no persistence", n.Index)
		if n.Spawned() {
			ev.Msg = fmt.Sprintf("node %d restarted, empty: its redis-server killed (SIGKILL) and started again without persistence", n.Index)
		}
	}
	if errors.Is(err, store.ErrUnsupported) {
		ev.Kind, ev.Msg = event.KindBeat, fmt.Sprintf("not available on a real server: %s on node %d", kind, n.Index)
	} else if err != nil {
		ev.Msg += ": " + err.Error()
	}
	env.Emit(ev)
	if n.Spawned() {
		env.announceServers()
	}
	return ev, err
}

// Faults are the run's faults so far, in time order: those planned, and
// in a simulation those pressed during the run with where they landed —
// with the seed and the parameters, the run's schedule.
func (r *Run) Faults() []Timed {
	r.pressedMu.Lock()
	defer r.pressedMu.Unlock()
	out := append(slices.Clone(r.planned), r.pressed...)
	slices.SortStableFunc(out, func(a, b Timed) int { return cmp.Compare(a.At, b.At) })
	return out
}
