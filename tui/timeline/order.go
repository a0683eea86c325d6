package timeline

import (
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// What the log says in the order workers learned it, drawn in the order it
// happened, and what the log implies without an event saying it.

// ranAt is when Redis ran the lock operation e answers, as far as the log
// can tell: an event stamped with its call (when the operation was sent)
// ran between its call and its answer, and after whatever the lock's lane
// already shows; so the lane changes at the call, or at the lock's last
// change when that came later. The TTL counts from there, as the lock
// library counts a lock's life from when it was sent. An unstamped event
// ran at its answer.
func ranAt(l *Lock, e *event.Event) time.Duration {
	if e.Has&event.HasCall == 0 || e.Call >= e.T {
		return e.T
	}
	at := e.Call
	if cur := l.current(); cur != nil {
		at = max(at, cur.T)
	}
	return min(at, e.T)
}

// takeOver notes that worker b took lock l at t while the lock lane still
// shows another holder that has left its critical section: that holder's
// release ran on Redis before b's acquire, though its answer came later. Its
// release is drawn at t.
func (tl *Timeline) takeOver(l *Lock, b int32, t time.Duration) {
	l.crashed = -1
	cur := l.current()
	if cur == nil || cur.Holder < 0 || cur.Holder == b || (cur.TTL > 0 && cur.Deadline < t) {
		return
	}
	a := tl.worker(cur.Holder)
	if a == nil || a.inCS || a.holds == 0 {
		return // still working: two holders, drawn as such
	}
	if a.released == nil {
		a.released = map[string]time.Duration{}
	}
	a.released[l.Name] = t
}

// tookOver reports whether w's release of res was already drawn by
// takeOver, and when.
func (w *Worker) tookOver(res string) (time.Duration, bool) {
	if w == nil {
		return 0, false
	}
	at, ok := w.released[res]
	if ok {
		delete(w.released, res)
	}
	return at, ok
}

// inferHolder: a denial on a lock the lane shows free means the key exists
// in Redis. When a worker crashed with an attempt on it unanswered, that
// worker took it (naive's crash point: after SETNX, before EXPIRE, so the
// key has no TTL); otherwise the holder is Unknown.
func (tl *Timeline) inferHolder(l *Lock, seq int64, t time.Duration) {
	if cur := l.current(); cur != nil && cur.Holder != -1 {
		return
	}
	sp := LockSpan{Seq: seq, T: t, Holder: Unknown, Inferred: true}
	if l.crashed >= 0 {
		// The crashed worker's key: with the TTL it asked for, unless the
		// lock sets its TTL apart from taking it (naive's crash point:
		// after SETNX, before EXPIRE) — then it never expires.
		sp.Holder, sp.T = l.crashed, l.crashedAt
		t, known := tl.TraitsOf(l.Name)
		switch {
		case known && t.ExpiryApart:
			sp.Forever = true
		case !known || t.HasTTL():
			sp.TTL = l.crashedTTL
			sp.Deadline = sp.T + sp.TTL
		}
	}
	if cur := l.current(); cur != nil && sp.T < cur.T {
		sp.T = cur.T
	}
	l.Spans.add(sp)
	if sp.TTL > 0 {
		tl.arm(tl.lockIdx[l.Name])
	}
}

// enter and leave follow who is inside each resource's critical section;
// two or more at once open an overlap.
func (tl *Timeline) enter(seq int64, t time.Duration, w int32, res string) {
	in := append(tl.inside[res], w)
	tl.inside[res] = in
	if len(in) == 2 {
		if tl.open == nil {
			tl.open = map[string]int{}
		}
		tl.open[res] = len(tl.Overlaps)
		tl.openOverlap(Interval{Seq: seq, EndSeq: -1, T: t})
	}
}

func (tl *Timeline) leave(seq int64, t time.Duration, w int32, res string) {
	for r, in := range tl.inside {
		if res != "" && r != res {
			continue
		}
		for i, x := range in {
			if x == w {
				in = append(in[:i], in[i+1:]...)
				break
			}
		}
		tl.inside[r] = in
		if i, ok := tl.open[r]; ok && len(in) < 2 {
			tl.closeOverlap(i, seq, t)
			delete(tl.open, r)
		}
	}
}

// OverlapsAt returns the overlaps as of cursor k; one still open at k has
// End −1.
func (tl *Timeline) OverlapsAt(k int) []Interval {
	o := tl.Overlaps[:upTo(len(tl.Overlaps), func(i int) int64 { return tl.Overlaps[i].Seq }, int64(k))]
	return o
}

// LostAt returns the lost-update count at cursor k.
func (tl *Timeline) LostAt(k int) int {
	n := upTo(len(tl.Lost), func(i int) int64 { return tl.Lost[i].Seq }, int64(k))
	if n == 0 {
		return 0
	}
	return tl.Lost[n-1].N
}

// ViolationsAt is how many violations the checker found up to cursor k.
func (tl *Timeline) ViolationsAt(k int) int {
	return upTo(len(tl.Violations), func(i int) int64 { return tl.Violations[i] }, int64(k))
}

// TallyAt is the run's tally at cursor k: every count a view shows.
func (tl *Timeline) TallyAt(k int) check.Tally { return tl.Tallies.At(k) }
