package workshop

import (
	"math"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

const ms = time.Millisecond

// twoMachines is a collector of alice (lane 0) and bob (lane 1) whose
// events are already in, as their stamps say: bob's clock sync ran 30ms
// early, so his take of the lock alice released reads before her release.
func twoMachines(bobTakes time.Duration) (*collector, *scenario.Run) {
	run := &scenario.Run{Log: event.NewLog(nil, nil)}
	alice := &inbox{a: Attendee{Name: "alice", Workers: 1, First: 0}, done: []bool{false}, mark: math.MaxInt64, syncErr: ms / 10}
	bob := &inbox{a: Attendee{Name: "bob", Workers: 1, First: 1}, done: []bool{false}, mark: math.MaxInt64, syncErr: ms / 10}
	at := func(k event.Kind, t, call time.Duration) event.Event {
		e := event.Event{Kind: k, Res: "lock:stock", T: t}
		if k == event.KindAcquired || k == event.KindRelease {
			e = e.WithCall(call)
			e.Token = "tok"
			e.TTL, e.Has = time.Second, e.Has|event.HasTTL
		}
		if k == event.KindWorkStart || k == event.KindWorkEnd {
			e.Res = "stock"
		}
		return e
	}
	alice.evs = []event.Event{at(event.KindAcquired, 100*ms, 99*ms), at(event.KindWorkStart, 101*ms, 0),
		at(event.KindWorkEnd, 140*ms, 0), at(event.KindRelease, 142*ms, 141*ms)}
	bob.evs = []event.Event{at(event.KindAcquired, bobTakes, bobTakes-ms), at(event.KindWorkStart, bobTakes+ms, 0),
		at(event.KindWorkEnd, bobTakes+40*ms, 0), at(event.KindRelease, bobTakes+42*ms, bobTakes+41*ms)}
	c := &collector{r: &Round{}, run: run, from: map[string]*inbox{"alice": alice, "bob": bob}}
	return c, run
}

func TestHandoverByCause(t *testing.T) {
	t.Parallel()
	// Bob took the lock 1ms after alice's release was sent; his stamps
	// say 29ms before it.
	c, run := twoMachines(112 * ms)
	c.release(false)
	evs := run.Log.Events()
	if len(evs) != 8 {
		t.Fatalf("%d events appended, want 8", len(evs))
	}
	if ch, _ := check.Check(check.Slice(evs)); ch.Overlaps != 0 {
		t.Fatalf("%d overlap(s) from a sync that missed by 30ms: %v", ch.Overlaps, evs)
	}
	for i, e := range evs[4:] {
		if e.Worker != 1 || e.T < 141*ms {
			t.Fatalf("bob's event %d at %v (lane %d): want after alice's release was sent at 141ms", i, e.T, e.Worker)
		}
	}
}

func TestHandoverAfterLapseShowsOverlap(t *testing.T) {
	t.Parallel()
	// Alice's lease (1s from 99ms) lapsed before bob's take: he did not
	// wait for her, and the log shows them inside together.
	c, run := twoMachines(1200 * ms)
	c.from["alice"].evs[2].T, c.from["alice"].evs[3].T, c.from["alice"].evs[3].Call = 1300*ms, 1302*ms, 1301*ms
	c.release(false)
	if ch, _ := check.Check(check.Slice(run.Log.Events())); ch.Overlaps != 1 {
		t.Fatalf("%d overlap(s) after alice's lease lapsed under her, want 1", ch.Overlaps)
	}
}
