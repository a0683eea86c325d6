package linear

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/anishathalye/porcupine"
)

// The histories of `locklab check`, built as the log is read: each event
// is folded into the tally (every count check prints) and into the
// operations of the resources it touches, and is not kept. What is kept
// is bounded: at most maxHeld operations and builder entries at once,
// whatever the log's length. Past that the largest history is let go —
// only its streamed witness (each operation at its return, stepped as it
// comes) can still call it linearizable — and if that is not enough, the
// histories are given up and only the tally goes on.

// maxHeld is how many operations (and builder entries) check holds at
// once: some 200 bytes each, 450 at most (a token is at most
// scenario.MaxNameBytes), so under 250 MB. Tests lower it.
var maxHeld = 1 << 19

// The models, in the order the report lists them.
var checkModels = []struct {
	name string
	m    porcupine.Model
}{{"lease", leaseModel}, {"register", registerModel}, {"section", sectionModel}}

// partition is one resource's history under one model.
type partition struct {
	model, res string
	m          porcupine.Model
	ops        opList // empty once let go
	n          int    // operations seen
	lockOps    int    // … that are a lock's (a lease history needs one)
	dropped    bool   // let go: too long to hold
	sw         streamWitness
}

// opList is a history held in chunks of opChunk operations: growing it
// never copies (nor holds twice) what it already holds, however long.
type opList struct {
	chunks [][]porcupine.Operation
	n      int
}

const opChunk = 4096

func (l *opList) add(op porcupine.Operation) {
	if l.n%opChunk == 0 {
		l.chunks = append(l.chunks, make([]porcupine.Operation, 0, opChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, op)
	l.n++
}

// all is the history in one slice, as porcupine takes it; the chunks are
// let go.
func (l *opList) all() []porcupine.Operation {
	if len(l.chunks) == 1 {
		return l.chunks[0]
	}
	out := make([]porcupine.Operation, 0, l.n)
	for i, c := range l.chunks {
		out = append(out, c...)
		l.chunks[i] = nil
	}
	l.chunks = nil
	return out
}

// streamWitness steps a history's operations through its model at their
// returns, as they come: the witness "each operation at its return"
// without holding the history. The log is in the order of its returns,
// so only operations never answered (placed last) are kept; one that
// returns before one already stepped ends it (bad: it cannot tell).
type streamWitness struct {
	state   interface{}
	last    int64
	bad     bool // the model refused an order, or the order was not the returns'
	pending []porcupine.Operation
}

func (w *streamWitness) add(m porcupine.Model, op porcupine.Operation) {
	switch {
	case w.bad:
	case op.Return >= pending:
		w.pending = append(w.pending, op)
	case op.Return < w.last:
		w.bad = true
	default:
		w.last = op.Return
		var ok bool
		if ok, w.state = m.Step(w.state, op.Input, op.Output); !ok {
			w.bad = true
		}
	}
}

// ok steps the operations never answered, last; true if the model took
// every operation in that order.
func (w *streamWitness) ok(m porcupine.Model) bool {
	for _, op := range w.pending {
		if w.bad {
			break
		}
		var ok bool
		if ok, w.state = m.Step(w.state, op.Input, op.Output); !ok {
			w.bad = true
		}
	}
	w.pending = nil
	return !w.bad
}

// historyChecker takes a log's events one at a time.
type historyChecker struct {
	header event.Header
	fold   *check.TallyFold
	lease  *leaseBuilder
	parts  map[[2]string]*partition // by model, resource
	inside map[int32][]string       // the sections each worker is in
	events int
	held   int // operations held in the partitions
	// full: the histories passed maxHeld with nothing left to let go, at
	// event fullAt; they were given up.
	full   bool
	fullAt int
}

func newHistoryChecker(h event.Header) *historyChecker {
	c := &historyChecker{header: h, fold: check.NewTallyFold(), parts: map[[2]string]*partition{}, inside: map[int32][]string{}}
	c.fold.Checker().Names = h.Lanes
	c.lease = newLeaseBuilder(h, func(key string, op porcupine.Operation) { c.put("lease", key, op) })
	return c
}

// put adds an operation to its resource's history.
func (c *historyChecker) put(model, res string, op porcupine.Operation) {
	k := [2]string{model, res}
	p := c.parts[k]
	if p == nil {
		p = &partition{model: model, res: res}
		for _, cm := range checkModels {
			if cm.name == model {
				p.m = cm.m
			}
		}
		p.sw.state = p.m.Init()
		c.parts[k] = p
	}
	p.n++
	if model != "lease" || isLockOp(op) {
		p.lockOps++
	}
	before := len(p.sw.pending)
	p.sw.add(p.m, op)
	c.held += len(p.sw.pending) - before
	if !p.dropped {
		p.ops.add(op)
		c.held++
	}
}

// add takes the log's next event.
func (c *historyChecker) add(e event.Event) {
	c.fold.Add(e)
	if c.full {
		return
	}
	i := c.events
	c.events++
	call, ret := c.lease.span(&e) // an invoke the log does not stamp: after the worker's previous event
	client := int(max(e.Worker, -1) + 1)
	c.lease.event(e)
	switch e.Kind {
	case event.KindInit, event.KindRead, event.KindWrite:
		if e.Has&event.HasStock == 0 || (e.Kind == event.KindWrite && e.Has&event.HasOK != 0 && !e.OK) {
			break
		}
		op := map[event.Kind]string{event.KindInit: "write", event.KindRead: "read", event.KindWrite: "write"}[e.Kind]
		c.put("register", e.Res, porcupine.Operation{ClientId: client, Input: regIn{op, e.Stock}, Call: call, Output: e.Stock, Return: ret})
	case event.KindWorkStart, event.KindWorkEnd, event.KindCrash:
		c.section(e, i, client)
	}
	c.bound()
}

// section adds a critical section's entry or exit, at its place in the
// log (i), where the checker sees it.
func (c *historyChecker) section(e event.Event, i, client int) {
	at := int64(i) * 2
	add := func(res string, in sectionIn) {
		c.put("section", res, porcupine.Operation{ClientId: client, Input: in, Call: at, Output: true, Return: at + 1})
	}
	switch e.Kind {
	case event.KindWorkStart:
		add(e.Res, sectionIn{"enter", e.Worker})
		if len(c.inside[e.Worker]) < 64 { // more at once is no real worker's: bounded
			c.inside[e.Worker] = append(c.inside[e.Worker], e.Res)
		}
	case event.KindWorkEnd:
		add(e.Res, sectionIn{"exit", e.Worker})
		c.inside[e.Worker] = slices.DeleteFunc(c.inside[e.Worker], func(r string) bool { return r == e.Res })
	default: // a crashed worker is inside nothing any more
		for _, r := range c.inside[e.Worker] {
			add(r, sectionIn{"exit", e.Worker})
		}
		delete(c.inside, e.Worker)
	}
}

// bound keeps what is held within maxHeld: the longest history held is
// let go (its streamed witness goes on), and when none is worth letting
// go, every history is given up.
func (c *historyChecker) bound() {
	for c.held+c.lease.held()+len(c.parts)+len(c.inside) > maxHeld {
		var big *partition
		for _, p := range c.parts {
			if !p.dropped && (big == nil || p.ops.n > big.ops.n || (p.ops.n == big.ops.n && p.model+p.res < big.model+big.res)) {
				big = p
			}
		}
		if big == nil || big.ops.n < maxHeld/8 {
			c.full, c.fullAt = true, c.events
			c.parts, c.lease, c.inside, c.held = nil, nil, nil, 0
			return
		}
		c.held -= big.ops.n
		big.ops, big.dropped = opList{}, true
	}
}

// done ends the histories and returns them in the report's order: by
// model, then resource; lock keys that saw no lock are left out.
func (c *historyChecker) done() []*partition {
	if c.full {
		return nil
	}
	c.lease.done()
	var out []*partition
	for _, cm := range checkModels {
		var ps []*partition
		for k, p := range c.parts {
			if k[0] == cm.name && p.lockOps > 0 {
				ps = append(ps, p)
			}
		}
		slices.SortFunc(ps, func(a, b *partition) int { return strings.Compare(a.res, b.res) })
		out = append(out, ps...)
	}
	return out
}
