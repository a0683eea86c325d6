package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/event"
)

// A log read from a file is only a run's whole record if it says so: its
// events numbered in order with none missing, their times never going
// back, the end record (the summary line a run writes last) last, and what
// the header and the end record say agreeing with what the events show. A
// log that fails one of these has no verdict: what it shows may not be
// what happened.

// IntegrityError says an event log is not a whole, consistent record of a
// run: cut short (INCOMPLETE), or contradicting itself (INCONSISTENT). Line
// is where: the line it stops at, or the line that disagrees.
type IntegrityError struct {
	Line int
	What string // "INCOMPLETE" or "INCONSISTENT"
	Msg  string
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("line %d: %s — %s; no verdict", e.Line, e.What, e.Msg)
}

// logCheck follows a log as its lines are read.
type logCheck struct {
	h        *event.Header
	events   int   // events read (kinds known or not)
	lastLine int   // the last line that held anything
	seq      int64 // of the last event
	t        time.Duration
	tLine    int
	endLine  int             // the end record's line, 0 before it
	end      *Summary        // the end record
	lockLine int             // the first lock event's line, 0 if none
	gap      *IntegrityError // a jump in seq, until the next event tells
	votes    int             // Redlock's votes, and the highest node one went to
	maxNode  int16
	final    finalReads
}

// line notes a line that held something (an event, the end record).
func (c *logCheck) line(n int) error {
	if c.endLine != 0 {
		return &IntegrityError{n, "INCONSISTENT", fmt.Sprintf("a line after the end record (line %d): two logs joined into one?", c.endLine)}
	}
	c.lastLine = n
	return nil
}

// event checks one event's place: seq one more than the last one's, t not
// before the last one's. An event out of order is refused; a gap is events
// missing.
func (c *logCheck) event(n int, e *event.Event) error {
	if err := c.line(n); err != nil {
		return err
	}
	switch {
	case c.events > 0 && e.Seq <= c.seq:
		return &LineError{n, fmt.Sprintf("seq %d comes after seq %d: the lines are out of order (a log is written in seq order)", e.Seq, c.seq)}
	case c.gap != nil:
		return c.gap // the events skipped did not come after: they are missing
	case c.events > 0 && e.Seq > c.seq+1:
		// Events missing, or lines swapped: the next line tells.
		c.gap = &IntegrityError{n, "INCOMPLETE", fmt.Sprintf("seq jumps from %d to %d: %d event(s) are missing before this line", c.seq, e.Seq, e.Seq-c.seq-1)}
	}
	switch {
	case c.events > 0 && e.T < c.t:
		return &LineError{n, fmt.Sprintf("t %s comes after t %s on line %d: the lines are out of order (time never goes back in a log)", micros(e.T), micros(c.t), c.tLine)}
	}
	c.events++
	c.seq, c.t, c.tLine = e.Seq, e.T, n
	switch e.Kind {
	case event.KindAcquired, event.KindVote, event.KindRenewed, event.KindRelease:
		if c.lockLine == 0 {
			c.lockLine = n
		}
	case event.KindInit, event.KindRead, event.KindWrite:
		c.final.add(n, int64(c.events), e, c.h.Time == "simulated")
	}
	if e.Kind == event.KindVote && e.Has&event.HasNode != 0 {
		c.votes++
		c.maxNode = max(c.maxNode, e.Node)
	}
	return nil
}

// endRecord takes the end record; it must agree with the header.
func (c *logCheck) endRecord(n int, s *Summary) error {
	if err := c.line(n); err != nil {
		return err
	}
	c.endLine, c.end = n, s
	h := c.h
	for _, f := range [][3]string{
		{"scenario", h.Scenario, s.Scenario},
		{"strategy", h.Strategy, s.Strategy},
		{"workers", fmt.Sprint(h.Params.Workers), fmt.Sprint(s.Workers)},
	} {
		if f[1] != f[2] && f[2] != "" && f[2] != "0" {
			return &IntegrityError{n, "INCONSISTENT", fmt.Sprintf("the header says %s %s, the end record says %s", f[0], f[1], f[2])}
		}
	}
	return nil
}

// finish is the log's end: it must have said so, and what it says of
// itself must be what its events show.
func (c *logCheck) finish() error {
	if c.gap != nil {
		return c.gap
	}
	if c.endLine == 0 {
		return &IntegrityError{c.lastLine, "INCOMPLETE", "the log stops here, with no end record (the summary line a run writes last): cut short, or saved mid-run"}
	}
	h := c.h
	if w := h.Params.Workers; w > 0 && len(h.Lanes) > 0 && len(h.Lanes) != w {
		return &IntegrityError{1, "INCONSISTENT", fmt.Sprintf("the header says %d workers but names %d lanes", w, len(h.Lanes))}
	}
	if n := h.Params.Nodes; c.votes > 0 && n > 0 && int(c.maxNode)+1 != n {
		// Every Redlock attempt asks every node: its votes name them all.
		return &IntegrityError{1, "INCONSISTENT", fmt.Sprintf("the header says %d nodes, the votes went to %d (node 0 to %d)", n, c.maxNode+1, c.maxNode)}
	}
	if h.Strategy == "none" && c.lockLine != 0 {
		return &IntegrityError{c.lockLine, "INCONSISTENT", "the header says strategy none (no lock), yet this line is a lock's: was the header edited?"}
	}
	return c.final.check()
}

// finalReads checks the reads the system makes of a resource (the final
// stock read) against the writes before them: a read returns the value
// of a write that nothing surely overwrote before it. Writes are kept
// only while another may still have landed after them, so the memory is
// that of the writes in flight at once, not of the log.
type finalReads map[string]*register1

// register1 is one resource's writes that may be its last, and the
// system's last read of it.
type register1 struct {
	last []write1 // writes not surely overwritten; unanswered ones stay
	read *read1
}

type write1 struct {
	s       span
	v       int64
	line    int
	w       int32
	unknown bool // unanswered: it may land at any time, or never
}

type read1 struct {
	s        span
	v        int64
	line     int
	possible []write1
}

// add takes a read or write. oneClock says every stamp in the log is of
// one clock (a simulation's): otherwise a write is only known to be
// overwritten by its own worker's next one (a worker on another machine
// stamps by a clock that may be seconds apart).
func (f *finalReads) add(line int, pos int64, e *event.Event, oneClock bool) {
	if e.Has&event.HasStock == 0 {
		return
	}
	if *f == nil {
		*f = finalReads{}
	}
	r := (*f)[e.Res]
	if r == nil {
		r = &register1{}
		(*f)[e.Res] = r
	}
	s := spanOf(e, pos)
	if e.Kind == event.KindRead {
		if e.Worker == event.System {
			r.read = &read1{s: s, v: e.Stock, line: line, possible: slices.Clone(r.last)}
		}
		return
	}
	if e.Kind == event.KindWrite && ((e.Has&event.HasOK != 0 && !e.OK) || e.Outcome == event.OutcomeFailed) {
		return // refused: it wrote nothing
	}
	w := write1{s: s, v: e.Stock, line: line, w: e.Worker, unknown: e.Outcome == event.OutcomeIndeterminate}
	if rd := r.read; rd != nil {
		// Logged after the read, it may still have landed before it: sent
		// before the read returned, or stamped by another machine's clock
		// and relayed late (a guest's worker in a shared race).
		rd.possible = append(rd.possible, w)
	}
	if !w.unknown {
		r.last = slices.DeleteFunc(r.last, func(x write1) bool {
			return !x.unknown && x.s.hi.before(w.s.lo) && (oneClock || x.w == w.w)
		})
	}
	r.last = append(r.last, w)
}

// check names the first resource whose last system read returned a value
// no write left.
func (f finalReads) check() error {
	res := make([]string, 0, len(f))
	for k, r := range f {
		if r.read != nil {
			res = append(res, k)
		}
	}
	sort.Strings(res)
	for _, k := range res {
		rd := f[k].read
		if len(rd.possible) == 0 || slices.ContainsFunc(rd.possible, func(w write1) bool { return w.v == rd.v }) {
			continue
		}
		var left []string
		for _, w := range rd.possible {
			left = append(left, fmt.Sprintf("%d (line %d, %s)", w.v, w.line, WorkerName(w.w)))
		}
		return &IntegrityError{rd.line, "INCONSISTENT", fmt.Sprintf("the final read says %s %d, but the last write(s) before it left %s: the log was edited, or something outside the run wrote %s",
			k, rd.v, strings.Join(left, " or "), k)}
	}
	return nil
}
