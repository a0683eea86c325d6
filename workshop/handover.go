package workshop

import (
	"time"

	"github.com/locklab/locklab/event"
)

// Lock hand-overs between machines are ordered by cause, not by clock.
//
// Each attendee's events are stamped from its own clock, moved onto the
// Redis server's by a sync that is only as good as its round trips; a lock
// can change hands between two machines faster than that. So a lock taken
// on one machine while the host's log still shows it held by a worker of
// another is appended only once that worker has let it go: the taker's
// SET could only succeed after the holder's release (or after the lease
// lapsed, which the log then shows as the overlap it is). The taker's
// stamps are moved no earlier than the release was sent, as causality says.

// holding is a lock the log shows held by a remote worker.
type holding struct {
	in     *inbox
	worker int32         // the host's lane
	until  time.Duration // server time, shifted: the lease lasts at least until then
}

// freed is the last release of a lock.
type freed struct {
	in   *inbox
	sent time.Duration // server time, shifted: when the release was sent
}

// handovers tracks, per lock, its holder and its last release.
type handovers struct {
	held map[string]holding
	free map[string]freed
}

// at is e's time on the server's clock as the host places it.
func (in *inbox) at(t time.Duration) time.Duration { return t + in.shift }

// sent is when e's operation was sent, else e's time.
func sentAt(e *event.Event) time.Duration {
	if e.Has&event.HasCall != 0 {
		return e.Call
	}
	return e.T
}

// waits reports whether e, in's next event, must wait for a lock held by
// another attendee's worker to be released first.
func (h *handovers) waits(in *inbox, e *event.Event) bool {
	if e.Kind != event.KindAcquired || e.Token == "" {
		return false
	}
	o, ok := h.held[e.Res]
	if !ok || o.in == in {
		return false // free, or held on the same machine, whose order is its own
	}
	// After the lease's least lifetime, the lock may have lapsed: the
	// taker goes in, and an overlap, if there is one, is real.
	return in.at(e.T) < o.until-in.syncErr-o.in.syncErr
}

// fold updates the holders with e, appended as the host's lane w, and
// moves in's stamps after the release that e's acquire observed.
func (h *handovers) fold(in *inbox, w int32, e *event.Event) {
	if h.held == nil {
		h.held, h.free = map[string]holding{}, map[string]freed{}
	}
	switch e.Kind {
	case event.KindAcquired:
		if e.Token == "" {
			return
		}
		if f, ok := h.free[e.Res]; ok && f.in != in && in.at(e.T) < f.sent {
			in.shift += f.sent - in.at(e.T)
		}
		h.held[e.Res] = holding{in: in, worker: w, until: in.at(sentAt(e)) + e.TTL}
	case event.KindRenewed:
		if o, ok := h.held[e.Res]; ok && o.worker == w && e.Has&event.HasTTL != 0 {
			o.until = max(o.until, in.at(sentAt(e))+e.TTL)
			h.held[e.Res] = o
		}
	case event.KindRelease, event.KindReleaseFailed, event.KindLockLost:
		if o, ok := h.held[e.Res]; ok && o.worker == w {
			delete(h.held, e.Res)
			h.free[e.Res] = freed{in: in, sent: in.at(sentAt(e))}
		}
	case event.KindCrash, event.KindDone:
		for res, o := range h.held {
			if o.worker == w {
				delete(h.held, res)
			}
		}
	}
}
