package timeline

import "time"

// A lock whose holder keeps it alive itself (a watchdog's renewals, a
// lease's keep-alives) is drawn held past its deadline while its
// renewals go on: the deadline passing by the run's clock is a renewal
// not back yet (late on a busy machine, or in flight), not a lapse. It
// lapses where the log says so: the holder's renewals stopped (it paused,
// crashed or finished; a renewal failed; the lock was lost), or another
// took the lock.

// renews reports whether lock name's holder extends it while it holds it.
func (tl *Timeline) renews(name string) bool {
	t, ok := tl.TraitsOf(name)
	return ok && t.Renews()
}

// renewing reports whether a holding of name with ttl, taken or renewed
// by worker w, is kept alive by w's renewals from here on.
func (tl *Timeline) renewing(name string, w int32, ttl time.Duration) bool {
	wk := tl.worker(w)
	return ttl > 0 && wk != nil && !wk.paused && !wk.crashed && tl.renews(name)
}

// stopRenewing: the log shows that worker w's renewals stopped at t — of
// lock res, or of every lock it holds (res ""). A deadline still to come
// is a lapse when it comes; one already passed lapses now, when the log
// says so.
func (tl *Timeline) stopRenewing(seq int64, t time.Duration, w int32, res string) {
	for i, l := range tl.Locks {
		cur := l.current()
		if (res != "" && l.Name != res) || cur == nil || cur.Holder != w || !cur.Renewing {
			continue
		}
		if cur.Deadline < t {
			tl.expire(l, seq, t)
			continue
		}
		sp := *cur
		sp.Seq, sp.T, sp.Renewing = seq, t, false
		l.Spans.add(sp)
		tl.arm(i)
	}
}

// resumeRenewing: worker w woke at t; the renewals of the locks it still
// holds go on.
func (tl *Timeline) resumeRenewing(seq int64, t time.Duration, w int32) {
	for i, l := range tl.Locks {
		cur := l.current()
		if cur == nil || cur.Holder != w || cur.Renewing || cur.Deadline < t || !tl.renewing(l.Name, w, cur.TTL) {
			continue
		}
		sp := *cur
		sp.Seq, sp.T, sp.Renewing = seq, t, true
		l.Spans.add(sp)
		tl.arm(i)
	}
}

// supersede: worker b took lock l at t while its holder's renewal was
// overdue: the lock had lapsed at its deadline.
func (tl *Timeline) supersede(l *Lock, seq int64, b int32, t time.Duration) {
	if cur := l.current(); cur != nil && cur.Holder >= 0 && cur.Holder != b && cur.Renewing && cur.Deadline < t {
		tl.expire(l, seq, cur.Deadline)
	}
}
