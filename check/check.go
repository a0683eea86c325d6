package check

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/event"
)

// Violation codes.
const (
	CodeOverlap    = "overlap"     // two workers inside one resource's critical section
	CodeOversold   = "oversold"    // more units sold than the stock held
	CodeLostUpdate = "lost_update" // a write based on a read that another write had made stale
	CodeDuplicate  = "duplicate"   // an effect allowed once happened again
)

// LimitOnce, as the Code of an init event, says every write to the
// resource is an effect that may happen once (a credit, a job's side
// effect): a second one is a duplicate.
const LimitOnce = "once"

// Checker is the safety checker: a pure fold over events that derives a
// violation event at the moment one happens. It checks mutual exclusion per
// resource (work_start/work_end), oversell (successful writes to a resource
// initialised with stock), and lost updates (a write whose read is stale).
// Violation events in its input are ignored, so a recorded log can be
// checked again.
type Checker struct {
	res map[string]*resState
	out []event.Event
	pos int64 // events folded

	Overlaps     int // entries into an occupied critical section
	OverlapPairs int // pairs of workers that were inside together
	Oversold     int // units sold beyond the initial stock
	// LostUpdates counts writes computed from a read that another write
	// surely overtook: one that was sent after the read's answer came and
	// answered before the write was sent. Writes whose intervals overlap
	// are never ordered by where the log happens to put them.
	LostUpdates int
	Duplicates  int
	Deadlocks   int

	// Operations the server failed (said no to) or did not answer.
	Failed, Indeterminate int
	// IndeterminateWrites are writes among them; Landed counts those the
	// final read of their resource shows applied.
	IndeterminateWrites, Landed int
	FailedMsg, IndeterminateMsg string // the first of each, in the server's words

	waits map[int32]waitEdge // who waits for whom (wait events)
	hist  budget             // what the registers hold (history.go)

	// Names are the lanes' names (alice/4), for the violations' words;
	// a worker without one is w04.
	Names []string
}

// StaleUnknown reports whether the checker let go of a read or of writes
// that a stale write needed to be counted (past its budget, on a log no
// run writes): LostUpdates is then at least what it says, not exactly.
func (c *Checker) StaleUnknown() bool { return c.hist.unsure }

// Held is how many reads and writes the checker's registers hold: what
// its memory grows with.
func (c *Checker) Held() int { return c.hist.reads + c.hist.writes + len(c.res) }

// name is worker w's lane name.
func (c *Checker) name(w int32) string {
	if w >= 0 && int(w) < len(c.Names) && c.Names[w] != "" {
		return c.Names[w]
	}
	return WorkerName(w)
}

type waitEdge struct {
	peer int32
	res  string
}

type resState struct {
	inside  []int32 // workers in the critical section
	writes  int64
	initial int64
	stocked bool
	once    bool
	sold    int64
	reg     register
	last    int64 // value of the last applied write (hasLast)
	hasLast bool
	unknown []int64 // values of writes that may or may not have landed
}

// NewChecker returns an empty checker.
func NewChecker() *Checker {
	return &Checker{res: map[string]*resState{}, waits: map[int32]waitEdge{}}
}

func (c *Checker) state(res string) *resState {
	s := c.res[res]
	if s == nil {
		s = &resState{}
		c.res[res] = s
	}
	return s
}

// Fold checks e and returns the violations it reveals (valid until the next
// call).
func (c *Checker) Fold(e event.Event) []event.Event { return c.fold(&e) }

// fold is Fold by pointer, for callers that keep e on their stack (the
// log's Emit): e is read, never kept.
func (c *Checker) fold(e *event.Event) []event.Event {
	c.out = c.out[:0]
	c.pos++
	switch e.Kind {
	case event.KindInit:
		s := c.state(e.Res)
		switch {
		case e.Code == LimitOnce:
			s.once = true
		case e.Has&event.HasStock != 0:
			s.initial, s.stocked = e.Stock, true
		}
	case event.KindWait:
		c.wait(e)
	case event.KindAcquired, event.KindDone:
		delete(c.waits, e.Worker)
	case event.KindWorkStart:
		s := c.state(e.Res)
		if len(s.inside) > 0 {
			c.Overlaps++
			c.OverlapPairs += len(s.inside)
			other := s.inside[0]
			c.violation(e, CodeOverlap, other, fmt.Sprintf("%s entered %s while %s is inside", c.name(e.Worker), e.Res, c.name(other)))
		}
		s.inside = append(s.inside, e.Worker)
	case event.KindWorkEnd, event.KindCrash:
		c.leave(e)
	case event.KindRead:
		s := c.state(e.Res)
		if e.Worker == event.System {
			c.finalRead(s, e)
			break
		}
		s.reg.read(&c.hist, e.Worker, spanOf(e, c.pos))
	case event.KindError:
		c.opError(e)
	case event.KindWrite:
		c.write(e)
	}
	return c.out
}

// wait notes who e's worker waits for (none: it waits no more), and a
// deadlock when the waits close a cycle.
func (c *Checker) wait(e *event.Event) {
	if e.Has&event.HasPeer == 0 || e.Peer < 0 {
		delete(c.waits, e.Worker)
		return
	}
	c.waits[e.Worker] = waitEdge{e.Peer, e.Res}
	if cyc := c.cycle(e.Worker); cyc != "" {
		c.Deadlocks++
		c.out = append(c.out, event.Event{Worker: e.Worker, Kind: event.KindDeadlock, Res: e.Res, Code: "cycle", Msg: cyc})
	}
}

// leave takes e's worker out of the critical section it leaves (a crash:
// out of every one, and it waits no more).
func (c *Checker) leave(e *event.Event) {
	if e.Kind == event.KindCrash {
		delete(c.waits, e.Worker)
	}
	for res, s := range c.res {
		if e.Kind == event.KindWorkEnd && res != e.Res {
			continue
		}
		for i, w := range s.inside {
			if w == e.Worker {
				s.inside = append(s.inside[:i], s.inside[i+1:]...)
				break
			}
		}
	}
}

// write checks a write that landed: from a stale read (a lost update), an
// effect applied twice where once was allowed, a sale past the stock.
func (c *Checker) write(e *event.Event) {
	if e.Has&event.HasOK != 0 && !e.OK {
		return
	}
	s := c.state(e.Res)
	if stale, _, more := s.reg.write(&c.hist, e.Worker, spanOf(e, c.pos)); stale > 0 {
		c.LostUpdates++
		n := fmt.Sprint(stale)
		if more {
			n = "at least " + n
		}
		c.violation(e, CodeLostUpdate, -1, fmt.Sprintf("%s wrote %s from a stale read: %s write(s) surely landed between its read and its write, and were lost", c.name(e.Worker), e.Res, n))
	}
	if e.Has&event.HasStock != 0 {
		s.last, s.hasLast = e.Stock, true
	}
	s.writes++
	if s.once && s.writes > 1 {
		c.Duplicates++
		c.violation(e, CodeDuplicate, -1, fmt.Sprintf("%s applied %d times; once was allowed", e.Res, s.writes))
	}
	if s.stocked {
		s.sold++
		if s.sold > s.initial {
			c.Oversold++
			c.violation(e, CodeOversold, -1, fmt.Sprintf("oversold: %d sold of %d in stock", s.sold, s.initial))
		}
	}
}

func (c *Checker) violation(e *event.Event, code string, peer int32, msg string) {
	v := event.Event{Worker: e.Worker, Kind: event.KindViolation, Res: e.Res, Code: code, Msg: msg}
	if peer >= 0 {
		v = v.WithPeer(peer)
	}
	c.out = append(c.out, v)
}

// opError counts an operation the server failed or did not answer.
func (c *Checker) opError(e *event.Event) {
	switch e.Outcome {
	case event.OutcomeFailed:
		c.Failed++
		if c.FailedMsg == "" {
			c.FailedMsg = e.Msg
		}
	case event.OutcomeIndeterminate:
		c.Indeterminate++
		if c.IndeterminateMsg == "" {
			c.IndeterminateMsg = e.Msg
		}
		if e.Code == "write" {
			c.IndeterminateWrites++
			if e.Has&event.HasStock != 0 {
				s := c.state(e.Res)
				s.unknown = append(s.unknown, e.Stock)
			}
		}
	}
}

// finalRead is the run's own read of a resource after every worker is
// done: it shows whether a write that was never answered landed.
func (c *Checker) finalRead(s *resState, e *event.Event) {
	if e.Has&event.HasStock == 0 || len(s.unknown) == 0 || (s.hasLast && s.last == e.Stock) {
		return
	}
	for _, v := range s.unknown {
		if v == e.Stock {
			c.Landed++
			return
		}
	}
}

// cycle returns "w00 → w01 → w00" when the wait-for edges from w close a
// cycle back to w, else "".
func (c *Checker) cycle(w int32) string {
	path := []string{c.name(w)}
	seen := map[int32]bool{w: true}
	for v := w; ; {
		e, ok := c.waits[v]
		if !ok {
			return ""
		}
		path = append(path, c.name(e.peer))
		if e.peer == w {
			return strings.Join(path, " → ")
		}
		if seen[e.peer] {
			return "" // a cycle, but not through w: reported when it closed
		}
		seen[e.peer] = true
		v = e.peer
	}
}

// Check folds events through a fresh checker and returns it with every
// violation it derived.
func Check(events Events) (*Checker, []event.Event) {
	c := NewChecker()
	var vs []event.Event
	for i := range events.Len() {
		e := events.At(i)
		if e.Kind == event.KindViolation {
			continue
		}
		vs = append(vs, c.Fold(e)...)
	}
	return c, vs
}

// WorkerName is a worker's short name: w03, or "system".
func WorkerName(w int32) string {
	if w < 0 {
		return "system"
	}
	if int(w) < len(workerNames) {
		return workerNames[w]
	}
	return fmt.Sprintf("w%d", w)
}

// workerNames are the first workers' names, made once: a long log names
// them again and again.
var workerNames = func() (names [100]string) {
	for i := range names {
		names[i] = fmt.Sprintf("w%02d", i)
	}
	return names
}()
