package timeline_test

import (
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/tui/timeline"
)

// keptAlive: w0 holds a lease of 100ms that it keeps alive; its keep-alive
// due by 140ms comes back late, at 200ms; w1 asks meanwhile. Then end
// happens to w0 at endMs, and w1 takes the lock at 400ms.
func keptAlive(end event.Kind, endMs int) *timeline.Timeline {
	s := &script{}
	s.at(0, 0, event.KindAttempt, "lock:leader")
	s.at(1, 0, event.KindAcquired, "lock:leader").TTL = 100 * time.Millisecond
	s.at(1, 0, event.KindWorkStart, "leader")
	s.at(40, 0, event.KindRenewed, "lock:leader").TTL = 100 * time.Millisecond
	s.at(180, 1, event.KindAttempt, "lock:leader")
	s.at(200, 0, event.KindRenewed, "lock:leader").TTL = 100 * time.Millisecond
	s.at(endMs, 0, end, "lock:leader")
	s.at(400, 1, event.KindAcquired, "lock:leader").TTL = 100 * time.Millisecond
	tl := timeline.New(2)
	tl.SetTraits(&trait.Traits{Expiry: trait.ExpiryLease, Renewal: trait.RenewalKeepAlive}, nil)
	tl.Catch(s.log())
	return tl
}

// TestKeptAliveLapsesWhereTheLogSays: a lock its holder keeps alive is
// not drawn lapsed when a keep-alive is late by the run's clock; it
// lapses where the log says the keep-alives stopped (a pause before the
// deadline: at the deadline; the lock lost after it: then).
func TestKeptAliveLapsesWhereTheLogSays(t *testing.T) {
	for _, c := range []struct {
		end   event.Kind
		at    int
		lapse time.Duration
	}{{event.KindPause, 260, 300 * time.Millisecond}, {event.KindLockLost, 320, 320 * time.Millisecond}} {
		tl := keptAlive(c.end, c.at)
		list, marks := tl.LockAt(tl.Locks[0], tl.N-1)
		spans := list.All()
		var lapses []time.Duration
		for _, m := range marks {
			if m.Kind == timeline.MarkLapse || m.Kind == timeline.MarkExpired {
				lapses = append(lapses, m.T)
			}
		}
		if len(lapses) != 1 || lapses[0] != c.lapse {
			t.Errorf("%s: lapses at %v, want one at %v", c.end, lapses, c.lapse)
		}
		for _, sp := range spans {
			if sp.T < c.lapse && sp.Holder != 0 {
				t.Errorf("%s: the lock drawn held by %d from %v, before the log says w0's keep-alives stopped", c.end, sp.Holder, sp.T)
			}
		}
	}
}
