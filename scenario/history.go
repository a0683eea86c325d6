package scenario

import (
	"slices"
	"time"
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
func spanOf(e *Event, pos int64) span {
	hi := instant{e.T, pos}
	if e.Has&HasCall == 0 {
		return span{hi, hi}
	}
	return span{instant{e.Call, 0}, hi}
}

// register is the history of one resource's reads and writes.
type register struct {
	writes []span    // applied writes, in log order (so by return)
	maxLo  []instant // maxLo[i]: the latest call among writes[0..i]
	reads  map[int32]span
}

func (r *register) read(w int32, s span) {
	if r.reads == nil {
		r.reads = map[int32]span{}
	}
	r.reads[w] = s
}

// write records an applied write and returns how many other writes surely
// landed between its read and it (a lost update if any), and whether it
// had a read.
func (r *register) write(w int32, s span) (between int, fromRead bool) {
	rd, ok := r.reads[w]
	if ok {
		delete(r.reads, w)
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
	}
	lo := s.lo
	if k := len(r.maxLo); k > 0 && lo.before(r.maxLo[k-1]) {
		lo = r.maxLo[k-1]
	}
	r.writes = append(r.writes, s)
	r.maxLo = append(r.maxLo, lo)
	return between, ok
}
