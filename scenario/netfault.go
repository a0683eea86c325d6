package scenario

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/store"
)

// netOn is a network fault in force in a run.
type netOn struct {
	id     int
	worker int32
	node   int
	toxic  store.Toxic
}

// netFaults are a run's network faults in force.
type netFaults struct {
	mu sync.Mutex
	on []netOn
}

// Link names worker w's link to node ("w01 ⇄ node 0"; −1: every worker).
func Link(w int32, node int) string {
	who := "every worker"
	if w >= 0 {
		who = check.WorkerName(w)
	}
	return fmt.Sprintf("%s ⇄ node %d", who, node)
}

// injectNet puts a network fault on the links it names, records it, and
// lifts it after f.D if f.D is set.
func (r *Run) injectNet(f Fault) (string, error) {
	e := r.env
	if f.Lift {
		return r.liftMatching(f)
	}
	nodes := e.Store.Nodes()
	first, last := f.Node, f.Node
	if f.Node < 0 {
		first, last = 0, len(nodes)-1
	}
	if first < 0 || last >= len(nodes) {
		return "", fmt.Errorf("there is no node %d: this run has %d", f.Node, len(nodes))
	}
	if f.Worker >= 0 && int(f.Worker) >= e.Lanes() {
		return "", fmt.Errorf("there is no %s: this run has %d workers", check.WorkerName(f.Worker), e.Lanes())
	}
	worker := f.Worker
	if worker < 0 {
		worker = store.AllWorkers
	}
	r.lag.network()
	var ids []int
	for n := first; n <= last; n++ {
		id, err := e.Store.AddToxic(worker, n, f.Net)
		if err != nil {
			return "", fmt.Errorf("network fault not added: %v", err)
		}
		ids = append(ids, id)
		r.nets.mu.Lock()
		r.nets.on = append(r.nets.on, netOn{id: id, worker: worker, node: n, toxic: f.Net})
		r.nets.mu.Unlock()
		msg := fmt.Sprintf("network #%d on: %s · %s", id, f.Net, Link(worker, n))
		if f.D > 0 {
			msg += fmt.Sprintf(" · for %v", f.D)
		}
		e.Emit(event.Event{Kind: event.KindBeat, Code: event.CodeNetOn, Node: int16(n), Has: event.HasNode, Msg: msg})
	}
	what := fmt.Sprintf("%s on %s", f.Net, Link(worker, f.Node))
	if f.Node < 0 {
		what = fmt.Sprintf("%s on %s ⇄ every node", f.Net, strings.TrimSuffix(Link(worker, 0), " ⇄ node 0"))
	}
	if f.D > 0 {
		what += fmt.Sprintf(" for %v", f.D)
		r.bg.Go(e.ctx, "network fault", func(ctx context.Context) {
			if err := e.Clock().Sleep(ctx, f.D); err != nil {
				for _, id := range ids { // the run ended first: nothing to tell
					e.Store.LiftToxic(id)
				}
				return
			}
			for _, id := range ids {
				r.liftNet(id)
			}
		})
	}
	return what, nil
}

// liftNet ends network fault id and records it; false if it had ended.
func (r *Run) liftNet(id int) bool {
	r.nets.mu.Lock()
	var gone netOn
	found := false
	for i, n := range r.nets.on {
		if n.id == id {
			gone, found = n, true
			r.nets.on = append(r.nets.on[:i], r.nets.on[i+1:]...)
			break
		}
	}
	r.nets.mu.Unlock()
	if !found || !r.env.Store.LiftToxic(id) {
		return false
	}
	r.env.Emit(event.Event{Kind: event.KindBeat, Code: event.CodeNetOff, Node: int16(gone.node), Has: event.HasNode,
		Msg: fmt.Sprintf("network #%d off: %s · %s", id, gone.toxic, Link(gone.worker, gone.node))})
	return true
}

// ToggleNet is the fault menu's network key: the fault of t's kind on
// worker w's link to node is lifted if one is in force, else t is added
// until lifted. The string says what happened.
func (r *Run) ToggleNet(w int32, node int, t store.Toxic) (string, error) {
	select {
	case <-r.done:
		return "", ErrRunOver
	default:
	}
	f := Fault{Kind: FaultNet, Worker: w, Node: node, Net: t}
	do := func() (string, error) {
		r.nets.mu.Lock()
		id := 0
		for _, n := range r.nets.on {
			if n.worker == w && n.node == node && n.toxic.Kind == t.Kind {
				id = n.id
			}
		}
		r.nets.mu.Unlock()
		if id > 0 {
			f.Lift = true
		}
		return r.injectNet(f)
	}
	if r.rt == nil {
		return do()
	}
	type result struct {
		msg string
		err error
	}
	got := make(chan result, 1)
	r.rt.Do(func() {
		at, now := r.rt.Landing()
		msg, err := do()
		if err == nil {
			r.pressedMu.Lock()
			r.pressed = append(r.pressed, Timed{At: now, Fault: f, Pressed: &at})
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

// NetOn lists the network faults in force now, oldest first: "latency
// 50ms±10ms both · w01 ⇄ node 0".
func (r *Run) NetOn() []string {
	r.nets.mu.Lock()
	defer r.nets.mu.Unlock()
	var out []string
	for _, n := range r.nets.on {
		out = append(out, fmt.Sprintf("%s · %s", n.toxic, Link(n.worker, n.node)))
	}
	return out
}

// liftMatching ends the network faults of f.Net's kind on the links f
// names.
func (r *Run) liftMatching(f Fault) (string, error) {
	w := f.Worker
	if w < 0 {
		w = store.AllWorkers
	}
	r.nets.mu.Lock()
	var ids []int
	for _, n := range r.nets.on {
		if n.worker == w && (f.Node < 0 || n.node == f.Node) && n.toxic.Kind == f.Net.Kind {
			ids = append(ids, n.id)
		}
	}
	r.nets.mu.Unlock()
	if len(ids) == 0 {
		return "", fmt.Errorf("no %s fault is in force on %s", f.Net.Kind, Link(w, max(f.Node, 0)))
	}
	for _, id := range ids {
		r.liftNet(id)
	}
	return fmt.Sprintf("%s lifted from %s", f.Net.Kind, Link(w, max(f.Node, 0))), nil
}

// network notes that a network fault was put on a link.
func (l *lagWatch) network() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.netted = true
	l.mu.Unlock()
}

func (l *lagWatch) networked() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.netted
}
