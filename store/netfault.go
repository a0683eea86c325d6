package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Network faults sit between each worker and each server, as toxiproxy's
// toxics do: latency with jitter, a bandwidth limit, a black hole (timeout),
// a reset peer, a slow close, a data limit, each on the way up (requests)
// or down (replies) or both, and a partition (the worker cannot reach the
// node at all). In a simulation they are virtual-time delays and drops on
// the command's trip; in real time every worker's commands to a node go
// through an in-process TCP proxy of its own (see netproxy.go) that applies
// them to the bytes.

// ToxicKind is a kind of network fault.
type ToxicKind uint8

// The network faults.
const (
	ToxicLatency   ToxicKind = iota + 1 // delay each chunk by D ± Jitter
	ToxicBandwidth                      // at most Rate bytes a second
	ToxicTimeout                        // a black hole: data is dropped; after D (if > 0) the connection closes
	ToxicReset                          // the connection is reset (RST) after D
	ToxicSlowClose                      // a close waits D before it reaches the other side
	ToxicLimitData                      // the connection closes once Bytes have passed
	ToxicPartition                      // the worker cannot reach the node: dials refused, connections cut
)

var toxicNames = map[ToxicKind]string{
	ToxicLatency: "latency", ToxicBandwidth: "bandwidth", ToxicTimeout: "timeout", ToxicReset: "reset",
	ToxicSlowClose: "slow-close", ToxicLimitData: "limit-data", ToxicPartition: "partition",
}

// ToxicKinds lists the kinds in the order they are documented.
func ToxicKinds() []ToxicKind {
	return []ToxicKind{ToxicLatency, ToxicBandwidth, ToxicTimeout, ToxicReset, ToxicSlowClose, ToxicLimitData, ToxicPartition}
}

func (k ToxicKind) String() string {
	if s, ok := toxicNames[k]; ok {
		return s
	}
	return fmt.Sprintf("toxic-%d", k)
}

// ParseToxicKind is the kind named s.
func ParseToxicKind(s string) (ToxicKind, bool) {
	for _, k := range ToxicKinds() {
		if toxicNames[k] == s {
			return k, true
		}
	}
	return 0, false
}

// Dir is the way a fault acts: on requests, on replies, or both.
type Dir uint8

// The directions.
const (
	Up   Dir = 1 << iota // worker → server
	Down                 // server → worker
	Both = Up | Down
)

func (d Dir) String() string {
	switch d {
	case Up:
		return "up"
	case Down:
		return "down"
	}
	return "both"
}

// Toxic is one network fault.
type Toxic struct {
	Kind   ToxicKind
	Dir    Dir
	D      time.Duration // latency; timeout, reset and slow-close delay
	Jitter time.Duration // latency ± this
	Rate   int64         // bandwidth, bytes a second
	Bytes  int64         // limit-data
}

// Check says what is wrong with t, if anything.
func (t Toxic) Check() error {
	switch {
	case t.Dir == 0 || t.Dir > Both:
		return fmt.Errorf("direction: want up, down or both")
	case t.D < 0 || t.Jitter < 0 || t.D > time.Hour || t.Jitter > time.Hour:
		return fmt.Errorf("durations go from 0 to 1h")
	case t.Kind == ToxicLatency && t.D == 0 && t.Jitter == 0:
		return fmt.Errorf("latency needs a delay above 0, e.g. latency=50ms~10ms")
	case t.Kind == ToxicBandwidth && (t.Rate <= 0 || t.Rate > 1<<40):
		return fmt.Errorf("bandwidth needs a rate above 0 bytes a second, e.g. bandwidth=2KB")
	case t.Kind == ToxicSlowClose && t.D == 0:
		return fmt.Errorf("slow-close needs a delay above 0, e.g. slow-close=500ms")
	case t.Kind == ToxicLimitData && (t.Bytes <= 0 || t.Bytes > 1<<40):
		return fmt.Errorf("limit-data needs a byte count above 0, e.g. limit-data=200")
	case t.Kind < ToxicLatency || t.Kind > ToxicPartition:
		return fmt.Errorf("unknown network fault")
	}
	return nil
}

// String says what t does: "latency 50ms±10ms up".
func (t Toxic) String() string {
	s := t.Kind.String()
	switch t.Kind {
	case ToxicLatency:
		s += " " + t.D.String()
		if t.Jitter > 0 {
			s += "±" + t.Jitter.String()
		}
	case ToxicBandwidth:
		s += " " + Bytes(t.Rate) + "/s"
	case ToxicTimeout:
		if t.D > 0 {
			s += ", closed after " + t.D.String()
		} else {
			s += " (black hole)"
		}
	case ToxicReset, ToxicSlowClose:
		if t.D > 0 {
			s += " after " + t.D.String()
		}
	case ToxicLimitData:
		s += " " + Bytes(t.Bytes)
	}
	if t.Kind != ToxicPartition {
		s += " " + t.Dir.String()
	}
	return s
}

// Bytes writes a byte count the way the fault specs take it.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// AllWorkers aims a toxic at every worker's link to a node.
const AllWorkers int32 = -1

// netToxic is a toxic in force on worker's (or every worker's) link to node.
type netToxic struct {
	id     int
	worker int32
	node   int
	Toxic
	used map[int32]int64 // limit-data: bytes each worker's connection has passed so far
}

// netTable is the run's network faults in force, in the order they began.
type netTable struct {
	mu      sync.Mutex
	next    int
	toxics  []*netToxic
	changed chan struct{} // closed and replaced at every change
	rng     *rand.Rand    // jitter in a simulation
}

func newNetTable() *netTable { return &netTable{changed: make(chan struct{})} }

func (t *netTable) add(worker int32, node int, x Toxic) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.toxics = append(t.toxics, &netToxic{id: t.next, worker: worker, node: node, Toxic: x, used: map[int32]int64{}})
	t.bump()
	return t.next
}

func (t *netTable) lift(id int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := slices.IndexFunc(t.toxics, func(x *netToxic) bool { return x.id == id })
	if i < 0 {
		return false
	}
	t.toxics = slices.Delete(t.toxics, i, i+1)
	t.bump()
	return true
}

// bump wakes whatever waits for a change. mu is held.
func (t *netTable) bump() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// on are the toxics on worker's link to node now, oldest first, and a
// channel closed at the next change.
func (t *netTable) on(worker int32, node int) ([]Toxic, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Toxic
	for _, x := range t.toxics {
		if x.node == node && (x.worker == AllWorkers || x.worker == worker) {
			out = append(out, x.Toxic)
		}
	}
	return out, t.changed
}

// spend counts n bytes against worker's limit-data toxics on node in
// direction d: it reports whether the limit is passed (the connection
// closes; the next one starts afresh).
func (t *netTable) spend(worker int32, node int, d Dir, n int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	over := false
	for _, x := range t.toxics {
		if x.Kind != ToxicLimitData || x.node != node || x.Dir&d == 0 || (x.worker != AllWorkers && x.worker != worker) {
			continue
		}
		x.used[worker] += n
		if x.used[worker] > x.Bytes {
			x.used[worker] = 0
			over = true
		}
	}
	return over
}

// AddToxic puts a network fault on worker's link to node (AllWorkers: on
// every worker's); it stays until LiftToxic. It returns the fault's id.
func (s *Store) AddToxic(worker int32, node int, x Toxic) (int, error) {
	if node < 0 || node >= len(s.nodes) {
		return 0, fmt.Errorf("there is no node %d: this run has %d", node, len(s.nodes))
	}
	if err := x.Check(); err != nil {
		return 0, err
	}
	if !s.Simulated() {
		if err := s.nodes[node].arm(); err != nil {
			return 0, err
		}
		if worker >= 0 {
			s.nodes[node].dialLink(worker)
		}
	}
	return s.netFaults.add(worker, node, x), nil
}

// LiftToxic ends the network fault id; false if it had ended already.
func (s *Store) LiftToxic(id int) bool { return s.netFaults.lift(id) }

type workerKey struct{}

// WithWorker marks ctx as worker w's: its commands travel on w's links,
// where network faults aimed at w act.
func WithWorker(ctx context.Context, w int32) context.Context {
	return context.WithValue(ctx, workerKey{}, w)
}

// WorkerOf is the worker whose commands ctx carries, or −1.
func WorkerOf(ctx context.Context) int32 {
	if w, ok := ctx.Value(workerKey{}).(int32); ok {
		return w
	}
	return -1
}
