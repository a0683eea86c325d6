package check

import (
	"slices"
	"time"

	"github.com/locklab/locklab/event"
)

// A history is what the checker keeps of each operation on a register (a
// read or a write of the stock): the interval from when it was sent
// (invoke) to when its answer arrived (return). The server applied it at
// some instant inside that interval; which instant, the log cannot say.
// So the checker never trusts the log's order between two operations
// whose intervals overlap: a read whose interval ends before a write's
// begins cannot have seen it, and a write whose interval ends before a
// read's begins was seen — anything else may have gone either way.
//
// An operation without a call stamp (a version 1 log) is a point at its
// place in the log, which is the order the old checker trusted.

// instant is a point of a history: a virtual time, then the place in the
// log. Two stamped instants in the same microsecond are not ordered.
type instant struct {
	t   time.Duration
	pos int64 // place in the log for unstamped operations; 0 for a call
}

func (a instant) before(b instant) bool { return a.t < b.t || (a.t == b.t && a.pos < b.pos) }

// span is an operation's interval.
type span struct{ lo, hi instant }

// spanOf is e's interval; pos is its place in the log.
func spanOf(e *event.Event, pos int64) span {
	hi := instant{e.T, pos}
	if e.Has&event.HasCall == 0 {
		return span{hi, hi}
	}
	return span{instant{e.Call, 0}, hi}
}

// register is the history of one resource's reads and writes. It holds
// the reads not yet followed by their worker's write, and the writes some
// read may still have seen overtaken: a write whose call is not after
// the answer of any read held (nor of any read to come, the log being in
// the order of answers) can no longer count, and is let go. Past the
// checker's budget (budget) older writes are let go as well, and a read
// they may have overtaken says so (write's more).
type register struct {
	writes  []span    // writes held, in log order (so by return)
	maxLo   []instant // maxLo[i]: the latest call among every write up to writes[i], held or not
	reads   map[int32]span
	last    instant // the latest call among every write
	goneLo  instant // the latest call among the writes let go
	gone    bool    // some writes were let go
	wrote   bool    // a write has been recorded (last is set)
	refused bool    // a read was not kept (past the budget)
	keep    int     // writes held after the last trim
}

// budget is what the checker's registers hold in all, and whether its
// bound ever cost a count its certainty.
type budget struct {
	reads, writes int
	unsure        bool
}

// maxWrites is how many writes the registers hold in all (some 50 bytes
// each). Tests lower it.
var maxWrites = 1 << 20

func (r *register) read(b *budget, w int32, s span) {
	if _, ok := r.reads[w]; !ok {
		if b.reads >= maxReads {
			r.refused = true // a write without a read here may be this one's
			return
		}
		if r.reads == nil {
			r.reads = map[int32]span{}
		}
		b.reads++
	}
	r.reads[w] = s
}

// write records an applied write and returns how many other writes surely
// landed between its read and it (a lost update if any), whether it had a
// read, and whether writes let go may have landed there too (then
// between is at least that).
func (r *register) write(b *budget, w int32, s span) (between int, fromRead, more bool) {
	rd, ok := r.reads[w]
	if !ok && r.refused {
		b.unsure = true // its read may be one not kept: it looks blind
	}
	if ok {
		delete(r.reads, w)
		b.reads--
		// Writes that returned before s was sent are a prefix of the log.
		n, _ := slices.BinarySearchFunc(r.writes, s.lo, func(x span, t instant) int {
			if x.hi.before(t) {
				return -1
			}
			return 1
		})
		if n > 0 && rd.hi.before(r.maxLo[n-1]) {
			for _, x := range r.writes[:n] {
				if rd.hi.before(x.lo) {
					between++
				}
			}
		}
		if r.gone && rd.hi.before(r.goneLo) {
			more = true
			b.unsure = b.unsure || between == 0
		}
	}
	if !r.wrote || r.last.before(s.lo) {
		r.last, r.wrote = s.lo, true
	}
	r.writes = append(r.writes, s)
	r.maxLo = append(r.maxLo, r.last)
	b.writes++
	r.trim(b)
	return between, ok, more
}

// trim lets go the writes no read held can count, once enough have come
// since the last trim to pay for a pass over the reads; and past the
// budget, the older half of this register's writes.
func (r *register) trim(b *budget) {
	if len(r.writes) >= 2*r.keep+16+len(r.reads) {
		n := len(r.writes)
		if len(r.reads) > 0 {
			oldest := instant{t: 1<<63 - 1}
			for _, rd := range r.reads {
				if rd.hi.before(oldest) {
					oldest = rd.hi
				}
			}
			n = 0
			for n < len(r.writes) && !oldest.before(r.writes[n].lo) {
				n++
			}
		}
		r.drop(b, n)
		r.keep = len(r.writes)
	}
	if b.writes > maxWrites && len(r.writes) > 0 {
		r.drop(b, (len(r.writes)+1)/2)
		r.keep = len(r.writes)
	}
}

// drop lets go the first n writes held.
func (r *register) drop(b *budget, n int) {
	if n == 0 {
		return
	}
	for _, x := range r.writes[:n] {
		if !r.gone || r.goneLo.before(x.lo) {
			r.goneLo, r.gone = x.lo, true
		}
	}
	r.writes = slices.Clone(r.writes[n:])
	r.maxLo = slices.Clone(r.maxLo[n:])
	b.writes -= n
}
