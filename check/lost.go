package check

import (
	"github.com/locklab/locklab/event"
)

// Updates counts lost updates: the one count the summary, the verdict, the
// gauge and the JSON all show. Each successful write to a resource is based
// on the version its worker last read (or on the latest version, when it
// did not read); a write's effect survives when a chain of writes, each
// based on the one before, leads from it to the resource's current
// version. Lost updates are the writes whose effect did not survive:
// writes − the length of the current version's chain. For a counter that
// every sale decrements, that is sold − (initial − final).
//
// The log's order is not the order the server applied things (an event is
// stamped when its answer arrives), so the count never rests on it where
// values decide: once the run's own final read of a counter is in — a
// counter whose every write was the value its worker read minus one — the
// count is writes − (initial − final), the same under every order of the
// operations. Until then, and for other resources, it follows the log's
// order. Writes that were never answered (indeterminate) may have landed:
// LostMax adds them, so the count is a bound [Lost, LostMax].
//
// What it holds is bounded: per resource a few counts, and per worker that
// read it and has not written since, one mark — at most maxReads marks in
// all. A read past that is not kept, and from then on the count is
// unknown (Unknown), never a guess.
type Updates struct {
	res   map[string]*updChain
	reads int // marks held, over every chain
	// unknown: a write came without a mark where a read was not kept,
	// so it may have been counted on the wrong base.
	unknown bool
}

// maxReads is how many reads Updates keeps marks of at once (some 40
// bytes each); no real run has more workers × resources read and not
// yet written. Tests lower it.
var maxReads = 1 << 20

// readMark is what a worker's last read of a resource left: the chain
// length of the version it read, and the value.
type readMark struct {
	depth  int32
	hasVal bool
	val    int64
}

type updChain struct {
	// Versions are only ever read back through their chain length, so a
	// version's is kept with the reads that saw it, and the chain keeps
	// only the current one's.
	versions int32
	cur      int32 // chain length of the current version (0 at the start)
	reads    map[int32]readMark
	refused  bool // a read of it was not kept (past maxReads)
	lost     int  // by the chain of the log's order

	initial, final     int64
	stocked, hasFinal  bool
	notCounter         bool // a write that was not its read minus one, or blind
	writes, unanswered int
}

// count is the chain's lost updates: by values once they decide.
func (c *updChain) count() int {
	if c.stocked && c.hasFinal && !c.notCounter && c.writes > 0 {
		return max(c.writes-int(c.initial-c.final), 0)
	}
	return c.lost
}

// Fold takes one event into the count.
func (u *Updates) Fold(e *event.Event) {
	switch e.Kind {
	case event.KindInit:
		if e.Has&event.HasStock != 0 {
			c := u.chain(e.Res)
			c.initial, c.stocked = e.Stock, true
		}
	case event.KindError:
		if e.Code == "write" && e.Outcome == event.OutcomeIndeterminate {
			u.chain(e.Res).unanswered++
		}
	case event.KindRead:
		if e.Worker == event.System {
			if e.Has&event.HasStock != 0 {
				c := u.chain(e.Res)
				c.final, c.hasFinal = e.Stock, true
			}
			return
		}
		u.read(u.chain(e.Res), e)
	case event.KindWrite:
		if e.Has&event.HasOK != 0 && !e.OK {
			return
		}
		c := u.chain(e.Res)
		base := c.cur
		m, ok := c.reads[e.Worker]
		if ok {
			base = m.depth
			delete(c.reads, e.Worker)
			u.reads--
		} else if c.refused {
			u.unknown = true // its read may be the one not kept
		}
		if !ok || !m.hasVal || e.Has&event.HasStock == 0 || e.Stock != m.val-1 {
			c.notCounter = true
		}
		c.writes++
		// The new version's chain is its base's and one more; what it
		// leaves out of the current chain is lost.
		before := int(c.versions - c.cur)
		c.versions++
		c.cur = base + 1
		c.lost += int(c.versions-c.cur) - before
	}
}

// read marks e, a worker's read, on c.
func (u *Updates) read(c *updChain, e *event.Event) {
	m := readMark{depth: c.cur}
	if e.Has&event.HasStock != 0 {
		m.hasVal, m.val = true, e.Stock
	}
	if _, ok := c.reads[e.Worker]; !ok {
		if u.reads >= maxReads {
			c.refused = true
			return
		}
		if c.reads == nil {
			c.reads = map[int32]readMark{}
		}
		u.reads++
	}
	c.reads[e.Worker] = m
}

// Unknown reports whether a read was let go (past maxReads marks), so the
// count may rest on the wrong base: it is then unknown.
func (u *Updates) Unknown() bool { return u.unknown }

// Held is how many marks Updates holds: what its memory grows with.
func (u *Updates) Held() int { return u.reads + len(u.res) }

func (u *Updates) chain(res string) *updChain {
	if u.res == nil {
		u.res = map[string]*updChain{}
	}
	c := u.res[res]
	if c == nil {
		c = &updChain{}
		u.res[res] = c
	}
	return c
}

// Lost is the number of lost updates so far, over every resource (the
// least, when unanswered writes leave it a bound).
func (u *Updates) Lost() int {
	n := 0
	for _, c := range u.res {
		n += c.count()
	}
	return n
}

// LostMax is the most lost updates there can have been: Lost, plus the
// writes that were never answered and may have landed.
func (u *Updates) LostMax() int {
	n := u.Lost()
	for _, c := range u.res {
		n += c.unanswered
	}
	return n
}

// LostUpdates counts the lost updates of a run's events.
func LostUpdates(events Events) int {
	var u Updates
	for i := range events.Len() {
		e := events.At(i)
		u.Fold(&e)
	}
	return u.Lost()
}
