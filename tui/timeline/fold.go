package timeline

import (
	"strings"
	"time"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/themes"
)

// The steps of Timeline.Fold, one for each family of events.

// foldAsk folds the events of a worker asking for a lock: its attempt, a denial, a backoff, a wait.
func (tl *Timeline) foldAsk(seq int64, e *event.Event, w *Worker) {
	switch e.Kind {
	case event.KindAttempt:
		if w != nil {
			w.pending = themes.Attempting
			w.asked, w.askedTTL = e.Res, e.TTL
		}
	case event.KindDenied:
		if w != nil {
			w.pending = themes.Waiting
			w.asked = ""
			l, _ := tl.lock(e.Res)
			if heldDenial(e.Msg) { // the key exists: someone holds it
				tl.inferHolder(l, seq, e.T)
			}
			if l.current() != nil && l.current().Holder >= 0 && l.current().Holder != e.Worker {
				tl.waitFor(seq, e.Worker, l.current().Holder, e.Res)
			}
		}
	case event.KindBackoff:
		if w != nil {
			w.pending = themes.Waiting
		}
		tl.Backoffs = append(tl.Backoffs, Delay{seq, e.Delay})
	case event.KindWait:
		if e.Has&event.HasPeer != 0 {
			tl.waitFor(seq, e.Worker, e.Peer, e.Res)
		}
	}
}

// foldHold folds the events that give or keep a lock: an acquire, a renewal, a vote.
func (tl *Timeline) foldHold(seq int64, e *event.Event, w *Worker) {
	switch e.Kind {
	case event.KindAcquired:
		if w != nil {
			w.pending = themes.Idle
			w.asked = ""
			w.holds++
			tl.waitFor(seq, e.Worker, -1, "")
		}
		l, i := tl.lock(e.Res)
		at := ranAt(l, e)
		tl.supersede(l, seq, e.Worker, at)
		tl.takeOver(l, e.Worker, at)
		ttl := tl.ttlOf(e.Res, e)
		l.Spans.add(LockSpan{Seq: seq, T: at, Holder: e.Worker, TTL: ttl, Deadline: at + ttl, Fence: e.Fence,
			Forever: ttl == 0 && tl.forever(e.Res), Renewing: tl.renewing(e.Res, e.Worker, ttl)})
		l.lapsed = -1
		tl.arm(i)
		tl.handOver(seq, e.Res, e.Worker)
	case event.KindRenewed:
		l, i := tl.lock(e.Res)
		at := ranAt(l, e)
		// A renewal that answers after the TTL ran out by the run's clock
		// (a late keep-alive on a busy machine) says the server still kept
		// the lock: its holder holds it again.
		if cur := l.current(); cur != nil && (cur.Holder == e.Worker || cur.Holder == -1 && l.lapsed == e.Worker) {
			ttl := tl.ttlOf(e.Res, e)
			fence := cur.Fence
			if e.Has&event.HasFence != 0 {
				fence = e.Fence
			}
			l.Spans.add(LockSpan{Seq: seq, T: at, Holder: e.Worker, TTL: ttl, Deadline: at + ttl, Fence: fence,
				Forever: ttl == 0 && tl.forever(e.Res), Renewing: tl.renewing(e.Res, e.Worker, ttl)})
			tl.arm(i)
		}
		l.addMark(Mark{seq, at, MarkRenewal, e.Worker})
	case event.KindVote:
		if e.Has&event.HasNode != 0 {
			l, _ := tl.lock(e.Res)
			l.Votes = append(l.Votes, Vote{seq, e.Worker, e.Node, e.OK})
		}
	}
}

// foldRelease folds a release (or its failure): drawAt is where the lane's change is drawn, moved when the next holder's acquire came first in the log.
func (tl *Timeline) foldRelease(seq int64, e *event.Event, w *Worker, drawAt time.Duration) time.Duration {
	switch e.Kind {
	case event.KindRelease, event.KindReleaseFailed:
		if event.IsUndo(e) {
			return drawAt // a partial acquire's votes freed on a node: nothing was held
		}
		if e.Kind == event.KindReleaseFailed {
			if w != nil && w.holds > 0 {
				w.holds--
			}
			l, _ := tl.lock(e.Res)
			l.addMark(Mark{seq, e.T, MarkReleaseFailed, e.Worker})
			return drawAt
		}
		if w != nil && w.holds > 0 {
			w.holds--
		}
		l, _ := tl.lock(e.Res)
		if cur := l.current(); e.Has&event.HasNode != 0 && cur != nil && cur.Holder >= 0 && cur.Holder != e.Worker {
			return drawAt // a stale holder freeing its own key on one node of a quorum another now holds
		}
		if at, ok := w.tookOver(e.Res); ok {
			// The next holder's acquire came first in the log, but Redis
			// ran this release before it: drawn there.
			drawAt = at
		} else if cur := l.current(); cur != nil && cur.Holder != -1 {
			at := ranAt(l, e)
			if cur.Holder >= 0 && cur.Holder != e.Worker {
				l.addMark(Mark{seq, at, MarkForeignDelete, e.Worker})
			}
			l.Spans.add(LockSpan{Seq: seq, T: at, Holder: -1})
			tl.handOver(seq, e.Res, -1)
		}
	}
	return drawAt
}

// foldLoss folds the events that end a hold without a release: a lock lost, a renewal failed, an expiry.
func (tl *Timeline) foldLoss(seq int64, e *event.Event, w *Worker) {
	switch e.Kind {
	case event.KindLockLost:
		if w != nil && w.holds > 0 {
			w.holds--
		}
		l, _ := tl.lock(e.Res)
		l.addMark(Mark{seq, e.T, MarkLost, e.Worker})
		tl.stopRenewing(seq, e.T, e.Worker, e.Res)
	case event.KindRenewFailed:
		tl.stopRenewing(seq, e.T, e.Worker, e.Res)
	case event.KindExpired:
		l, _ := tl.lock(e.Res)
		if cur := l.current(); cur != nil && cur.Holder >= 0 {
			tl.expire(l, seq, e.T)
		}
	}
}

// foldWork folds a worker's critical section and the stock it reads and writes.
func (tl *Timeline) foldWork(seq int64, e *event.Event, w *Worker) {
	switch e.Kind {
	case event.KindInit:
		if e.Has&event.HasStock != 0 && !tl.HasStock {
			tl.HasStock, tl.Initial = true, e.Stock
			tl.Stock = append(tl.Stock, Point{seq, e.T, e.Stock})
		}
	case event.KindWorkStart:
		if w != nil {
			w.inCS = true
		}
		tl.enter(seq, e.T, e.Worker, e.Res)
	case event.KindWorkEnd:
		if w != nil {
			w.inCS = false
		}
		tl.leave(seq, e.T, e.Worker, e.Res)
	case event.KindWrite:
		if e.Has&event.HasStock != 0 && (e.Has&event.HasOK == 0 || e.OK) {
			tl.Stock = append(tl.Stock, Point{seq, e.T, e.Stock})
			if tl.HasStock {
				tl.Sales = append(tl.Sales, seq)
			}
		}
	case event.KindRead:
		if e.Worker == event.System && e.Has&event.HasStock != 0 {
			tl.Stock = append(tl.Stock, Point{seq, e.T, e.Stock})
		}
	}
}

// foldLife folds what happens to a worker: a pause, a crash, a resume, its end; and the run's markers.
func (tl *Timeline) foldLife(seq int64, e *event.Event, w *Worker) {
	switch e.Kind {
	case event.KindPause:
		if w != nil {
			w.paused = true
		}
		tl.stopRenewing(seq, e.T, e.Worker, "")
	case event.KindCrash:
		if w != nil {
			w.crashed, w.inCS = true, false
			if w.asked != "" {
				// It may have taken the lock before it died (naive's
				// crash point): a later denial will tell.
				l, _ := tl.lock(w.asked)
				l.crashed, l.crashedAt, l.crashedTTL = e.Worker, e.T, w.askedTTL
			}
		}
		tl.leave(seq, e.T, e.Worker, "")
		tl.endSessions(seq, e.T, e.Worker)
		tl.stopRenewing(seq, e.T, e.Worker, "")
		tl.addMarker(Marker{seq, e.T, MarkerCrash})
	case event.KindResume:
		if w != nil {
			w.paused = false
		}
		tl.resumeRenewing(seq, e.T, e.Worker)
	case event.KindDone:
		if w != nil {
			w.finished = themes.DoneFail
			if e.OK {
				w.finished = themes.DoneOK
			}
			w.pending, w.inCS = themes.Idle, false
			tl.waitFor(seq, e.Worker, -1, "")
		}
		tl.leave(seq, e.T, e.Worker, "")
		tl.stopRenewing(seq, e.T, e.Worker, "")
	case event.KindDeadlock:
		tl.addMarker(Marker{seq, e.T, MarkerDeadlock})
	case event.KindBeat:
		tl.addMarker(Marker{seq, e.T, MarkerBeat})
	}
}

// heldDenial reports whether a denial's words say the lock is held:
// "held", or a library's "held; " and what it sent.
func heldDenial(msg string) bool {
	return msg == "held" || strings.HasPrefix(msg, "held; ")
}
