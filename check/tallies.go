package check

import (
	"encoding/binary"
	"slices"
	"sort"
	"unsafe"

	"github.com/locklab/locklab/event"
)

// Tallies is a run's tally at every playhead: the fold's changes in event
// order, in segments, each opening with a copy of the whole tally, so the
// tally after any event costs one copy and one segment's changes, however
// long the log. A segment closes once its changes take twice the bytes of
// the copy that opens the next (and it spans at least tallyEvery events),
// so the copies take at most half the memory of the changes: a run of many
// workers, whose tally is large, keeps fewer of them. The views fold once
// per frame (Catch up with Add) and seek with At.
type Tallies struct {
	fold *TallyFold
	segs []tallySeg // closed, in event order
	cur  tallySeg   // the open segment; its deltas are a buffer reused
}

// tallySeg is the changes of the events [from, from+n): base is the tally
// after the first from events. Each change is kept as three varints, about
// five bytes: its event's seq after the previous change's, its worker and
// count, and its amount.
type tallySeg struct {
	from   int
	base   Tally
	deltas []byte
	last   int64 // the seq of the last change kept
}

// tallyEvery is the fewest events a segment spans.
const tallyEvery = 256

// NewTallies returns an empty history.
func NewTallies() *Tallies {
	ts := &Tallies{fold: NewTallyFold()}
	ts.fold.sink = ts.keep
	return ts
}

// keep adds a change of the event being folded to the open segment. The
// count of events is not kept: it is the playhead's.
func (ts *Tallies) keep(d tallyDelta) {
	if d.worker < 0 && d.c == NEvents {
		return
	}
	b := binary.AppendUvarint(ts.cur.deltas, uint64(d.seq-ts.cur.last))
	b = binary.AppendUvarint(b, uint64(d.worker+1)<<16|uint64(d.c))
	ts.cur.deltas = binary.AppendVarint(b, d.n)
	ts.cur.last = d.seq
}

// replay applies to t the changes of seg's events up to seq k.
func (seg *tallySeg) replay(t *Tally, k int) {
	b, seq := seg.deltas, int64(seg.from)
	for len(b) > 0 {
		gap, n1 := binary.Uvarint(b)
		key, n2 := binary.Uvarint(b[n1:])
		n, n3 := binary.Varint(b[n1+n2:])
		if seq += int64(gap); seq > int64(k) {
			return
		}
		b = b[n1+n2+n3:]
		t.apply(tallyDelta{worker: int32(key>>16) - 1, c: Counter(key & 0xffff), n: n})
	}
}

// Len is how many events have been folded.
func (ts *Tallies) Len() int { return ts.fold.t.Get(NEvents) }

// Add folds the log's next event.
func (ts *Tallies) Add(e event.Event) {
	ts.fold.Add(e)
	n := ts.Len()
	span := n - ts.cur.from
	if span >= tallyEvery && len(ts.cur.deltas) >= 2*ts.fold.t.bytes() {
		ts.close(n)
	}
}

// close ends the open segment after n events: its changes are copied to a
// slice of their own size, and the next opens with the tally now.
func (ts *Tallies) close(n int) {
	done := ts.cur
	done.deltas = slices.Clone(done.deltas)
	ts.segs = append(ts.segs, done)
	ts.cur = tallySeg{from: n, base: ts.fold.t.Clone(), deltas: ts.cur.deltas[:0], last: int64(n)}
}

// bytes is about what a copy of t takes.
func (t *Tally) bytes() int {
	return int(unsafe.Sizeof(t.c)) + len(t.w)*int(unsafe.Sizeof(t.w[0]))
}

// HeldBytes is about what the history takes beyond the tally now: its
// copies and its changes.
func (ts *Tallies) HeldBytes() int {
	n := ts.cur.base.bytes() + cap(ts.cur.deltas)
	for i := range ts.segs {
		n += ts.segs[i].base.bytes() + len(ts.segs[i].deltas)
	}
	return n
}

// Fold is the fold behind the history.
func (ts *Tallies) Fold() *TallyFold { return ts.fold }

// Now is the tally after every event folded (shared: Clone it to keep it).
func (ts *Tallies) Now() *Tally { return &ts.fold.t }

// At is the tally after events 0…k (the playhead at event k); k < 0: before
// any.
func (ts *Tallies) At(k int) Tally {
	if k >= ts.Len()-1 {
		return ts.fold.t.Clone()
	}
	if k < 0 {
		return Tally{}
	}
	seg := &ts.cur
	if i := sort.Search(len(ts.segs), func(i int) bool { return ts.segs[i].from+ts.span(i) > k }); i < len(ts.segs) {
		seg = &ts.segs[i]
	}
	t := seg.base.Clone()
	seg.replay(&t, k)
	t.c[NEvents] = int64(k + 1)
	return t
}

// span is how many events closed segment i spans.
func (ts *Tallies) span(i int) int {
	if i+1 < len(ts.segs) {
		return ts.segs[i+1].from - ts.segs[i].from
	}
	return ts.cur.from - ts.segs[i].from
}

// TallyOf folds events into their tally.
func TallyOf(events Events) Tally {
	f := NewTallyFold()
	for i := range events.Len() {
		f.Add(events.At(i))
	}
	return f.t
}
