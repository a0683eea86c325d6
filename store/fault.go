package store

import (
	"errors"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// ErrUnsupported says a fault cannot be injected into this kind of node.
var ErrUnsupported = errors.New("store: this fault needs an embedded node")

// Pause makes a spawned server stop (SIGSTOP) and an embedded node hang on every command until Resume, like a
// server stopped by SIGSTOP or a long stop-the-world pause. Clients time out
// waiting for it.
func (n *Node) Pause() error {
	if n.topo != nil {
		return n.topo.Pause(n.Index)
	}
	if !n.embedded {
		return ErrUnsupported
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	if n.paused != nil {
		return nil
	}
	gate := make(chan struct{})
	n.paused = gate
	n.mini.Server().SetPreHook(func(*server.Peer, string, ...string) bool {
		<-gate
		return false
	})
	return nil
}

// Resume lets a paused embedded node answer again; held commands run now.
func (n *Node) Resume() {
	if n.topo != nil {
		n.topo.Resume(n.Index)
		return
	}
	if !n.embedded {
		return
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	if n.paused == nil {
		return
	}
	n.mini.Server().SetPreHook(nil)
	close(n.paused)
	n.paused = nil
}

// Paused reports whether the node is paused.
func (n *Node) Paused() bool {
	if n.topo != nil {
		return n.topo.Paused(n.Index)
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	return n.paused != nil
}

// Stop takes an embedded node down: its clients get connection errors. A
// spawned server is killed (SIGKILL).
func (n *Node) Stop() error {
	if n.topo != nil {
		n.topo.Crash(n.Index)
		return nil
	}
	if !n.embedded {
		return ErrUnsupported
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	if n.stopped {
		return nil
	}
	n.stopped = true
	if n.rt == nil {
		n.mini.Close()
	}
	return nil
}

// Start brings a stopped embedded node back on the same address, with its
// data or, like a Redis without persistence, empty. A spawned server has
// no persistence: it comes back empty whatever keepData says (KeepsData).
func (n *Node) Start(keepData bool) error {
	if n.topo != nil {
		if !n.topo.Down(n.Index) {
			return nil
		}
		return n.topo.Restart(n.Index)
	}
	if !n.embedded {
		return ErrUnsupported
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	if !n.stopped {
		return nil
	}
	if n.rt != nil {
		n.startInPlace(keepData)
		return nil
	}
	if !keepData {
		n.mini.FlushAll()
	}
	if err := listenAgain(n.mini, n.listening()); err != nil {
		return err
	}
	n.listened(n.mini)
	n.stopped = false
	return nil
}

// Down reports whether the node is stopped.
func (n *Node) Down() bool {
	if n.topo != nil {
		return n.topo.Down(n.Index)
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	return n.stopped
}

// JumpClock moves an embedded node's clock forward by d at once: its TTLs
// lapse as if d had passed (a clock jump, as NTP may do).
func (n *Node) JumpClock(d time.Duration) error {
	if !n.embedded {
		return ErrUnsupported
	}
	n.mu.Lock()
	n.skew.Jump(d)
	n.synced = -1 // force the next sync
	n.mu.Unlock()
	n.sync()
	return nil
}

// SlewClock makes an embedded node's clock gain d over the next over of
// virtual time, gradually, instead of at once: it runs (over+d)/over times
// as fast as the run's clock meanwhile, and its TTLs lapse that much
// sooner. A slew by d over the TTL ends where a jump by d would have, a TTL
// later.
func (n *Node) SlewClock(d, over time.Duration) error {
	if !n.embedded {
		return ErrUnsupported
	}
	n.mu.Lock()
	now := max(n.clock.Now(), n.synced)
	n.skew.Slew(now, d, over)
	n.mu.Unlock()
	n.sync()
	return nil
}

// ClockOffset is how far the node's clock is ahead of the run's now, and
// how fast it runs against it (1: in step). A real server's is unknown:
// 0 and 1.
func (n *Node) ClockOffset() (ahead time.Duration, rate float64) {
	if !n.embedded {
		return 0, 1
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	v := n.clock.Now()
	return n.skew.At(v), n.skew.Rate(v)
}

// KeepsData reports whether the node comes back from Stop with its data:
// an embedded node can; a spawned server has no persistence.
func (n *Node) KeepsData() bool { return n.topo == nil }

// Spawned reports whether the node is a server the run spawned, whose
// processes faults act on.
func (n *Node) Spawned() bool { return n.topo != nil }
