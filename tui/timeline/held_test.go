package timeline_test

import (
	"testing"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/tui/timeline"
)

// TestALibrarysHeldDenialShowsTheKeyExists: a library's denial says
// "held" and what it sent ("held; sent EVALSHA→nil"). After an acquire
// its library gave up on, such a denial is all that shows the key was
// set: the lane must not say free.
func TestALibrarysHeldDenialShowsTheKeyExists(t *testing.T) {
	for _, msg := range []string{"held", "held; sent EVALSHA→nil"} {
		s := &script{}
		s.at(0, 0, event.KindAttempt, "lock:stock")
		s.at(1, 1, event.KindAttempt, "lock:stock")
		s.at(2, 1, event.KindDenied, "lock:stock").Msg = msg
		tl := timeline.New(2)
		tl.Catch(s.log())
		list, _ := tl.LockAt(tl.Locks[0], tl.N-1)
		spans := list.All()
		if len(spans) == 0 || spans[len(spans)-1].Holder != timeline.Unknown {
			t.Errorf("denied %q: the lane's spans are %+v, want held by someone unknown", msg, spans)
		}
	}
	s := &script{}
	s.at(0, 1, event.KindAttempt, "lock:stock")
	s.at(1, 1, event.KindDenied, "lock:stock").Msg = "holder's lease is held elsewhere"
	tl := timeline.New(2)
	tl.Catch(s.log())
	if list, _ := tl.LockAt(tl.Locks[0], tl.N-1); list.Len() != 0 {
		t.Errorf("a denial that does not say held made the lane held: %+v", list.All())
	}
}
