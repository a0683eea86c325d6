package scenario

import (
	"time"

	"github.com/locklab/locklab/event"
)

// heldSince is when each worker's lock was last taken or renewed, as the
// narration sees the events go by.
type heldSince map[int32]time.Duration

// see wraps a beat's test: it notes every acquisition and renewal first.
func (h heldSince) see(on func(event.Event) bool) func(event.Event) bool {
	return func(e event.Event) bool {
		if e.Kind == event.KindAcquired || e.Kind == event.KindRenewed {
			h[e.Worker] = e.T
		}
		return on(e)
	}
}

// lapsed reports whether the lock of e's worker surely expired before e
// was sent: a whole TTL passed since its last acquisition or renewal came
// back.
func (h heldSince) lapsed(e event.Event, ttl time.Duration) bool {
	at, ok := h[e.Worker]
	return ok && ttl > 0 && e.Has&event.HasCall != 0 && e.Call-at >= ttl
}
