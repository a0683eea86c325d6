package timeline

import (
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock/trait"
)

// SetTraits tells the timeline what the run's locks are: the run's lock
// (nil: none, or not known) and the keys whose lock is another. The lock
// lanes draw from them: a TTL bar only for a lock that has a TTL, "never
// expires" only for a key that should have had one.
func (tl *Timeline) SetTraits(run *trait.Traits, keys map[string]trait.Traits) {
	tl.traits, tl.keyTraits = run, keys
}

// TraitsOf is what lock name's lock is; false when the timeline was not
// told.
func (tl *Timeline) TraitsOf(name string) (trait.Traits, bool) {
	if t, ok := tl.keyTraits[name]; ok {
		return t, true
	}
	if tl.traits == nil {
		return trait.Traits{}, false
	}
	return *tl.traits, true
}

// ttlOf is the TTL an acquire or renewal gives lock name: the event's,
// unless the lock has no TTL (a session's lock: a TTL in an older log is
// what was asked for, not what the lock had).
func (tl *Timeline) ttlOf(name string, e *event.Event) time.Duration {
	if e.Has&event.HasTTL == 0 && e.TTL == 0 {
		return 0
	}
	if t, ok := tl.TraitsOf(name); ok && !t.HasTTL() {
		return 0
	}
	return e.TTL
}

// forever reports whether a holding of lock name without a TTL never
// expires: the lock's keys should have one (naive's key left without its
// EXPIRE), or the timeline does not know what the lock is.
func (tl *Timeline) forever(name string) bool {
	t, ok := tl.TraitsOf(name)
	return !ok || t.HasTTL()
}

// endSessions frees the locks w held for its session: a holder that dies
// ends its session (its connection, its open file), and the server frees
// the lock at once, whether or not the log says so.
func (tl *Timeline) endSessions(seq int64, t time.Duration, w int32) {
	for _, l := range tl.Locks {
		cur := l.current()
		if cur == nil || cur.Holder != w {
			continue
		}
		if tr, ok := tl.TraitsOf(l.Name); ok && tr.Expiry == trait.ExpirySession {
			l.Spans.add(LockSpan{Seq: seq, T: max(t, cur.T), Holder: -1})
			tl.handOver(seq, l.Name, -1)
		}
	}
}
