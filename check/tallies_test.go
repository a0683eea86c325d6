package check

import (
	"reflect"
	"testing"
	"time"

	"github.com/locklab/locklab/event"
)

// manyWorkers is a log of n events of w workers taking turns on one lock,
// one of them backing off for an hour (a change too large for 32 bits).
func manyWorkers(w, n int) []event.Event {
	evs := []event.Event{{Kind: event.KindInit, Worker: -1, Res: "stock", Stock: int64(n), Has: event.HasStock}}
	kinds := []event.Kind{event.KindAttempt, event.KindDenied, event.KindBackoff, event.KindAttempt, event.KindAcquired,
		event.KindWorkStart, event.KindRead, event.KindWrite, event.KindWorkEnd, event.KindRelease, event.KindDone}
	stock := int64(n)
	for i := 0; len(evs) < n; i++ {
		wk := int32(i % w)
		for _, k := range kinds {
			e := event.Event{Kind: k, Worker: wk, Res: "lock:stock", T: time.Duration(len(evs)) * time.Microsecond}
			switch k {
			case event.KindBackoff:
				e.Delay, e.Has = 10*time.Millisecond, event.HasDelay
				if i == 7 {
					e.Delay = time.Hour
				}
			case event.KindAcquired:
				e.Token, e.Fence, e.Has = "t", int64(i+1), event.HasFence
			case event.KindRead:
				e.Res, e.Stock, e.Has = "stock", stock, event.HasStock
			case event.KindWrite:
				stock--
				e.Res, e.Stock, e.OK, e.Has = "stock", stock, true, event.HasStock|event.HasOK
			case event.KindDone:
				e.OK, e.Has = true, event.HasOK
			}
			evs = append(evs, e)
		}
	}
	return evs
}

// The tally at every playhead is the fold of the events up to it, across
// the segments a history of many workers keeps.
func TestTalliesAtIsTheFoldOfThePrefix(t *testing.T) {
	evs := manyWorkers(100, 8000)
	ts, ref := NewTallies(), NewTallyFold()
	want := make([]Tally, len(evs))
	for i, e := range evs {
		ts.Add(e)
		ref.Add(e)
		want[i] = ref.t.Clone()
	}
	if len(ts.segs) < 2 {
		t.Fatalf("%d segments: the test should cross several", len(ts.segs))
	}
	if got := ts.At(-1); !reflect.DeepEqual(got, Tally{}) {
		t.Fatalf("before any event: %v", got.c[:4])
	}
	for k := range evs {
		if got := ts.At(k); !reflect.DeepEqual(got, want[k]) {
			t.Fatalf("at event %d the history's tally differs from the fold's: %v vs %v", k, got.c[:8], want[k].c[:8])
		}
	}
}

// A history's copies take at most half its changes (and one copy more):
// its memory grows with the events, not with events × workers.
func TestTalliesCopiesCostNoMoreThanChanges(t *testing.T) {
	for _, w := range []int{4, 1000} {
		ts := NewTallies()
		for _, e := range manyWorkers(w, 40_000) {
			ts.Add(e)
		}
		copies, changes := ts.cur.base.bytes(), 0
		for _, s := range ts.segs {
			copies += s.base.bytes()
			changes += len(s.deltas)
		}
		changes += len(ts.cur.deltas)
		if copies > changes/2+ts.fold.t.bytes() {
			t.Errorf("%d workers: copies take %d bytes, changes %d", w, copies, changes)
		}
	}
}

// BenchmarkTalliesHeld is the bytes a seekable tally history keeps per
// event, of a run of 1 000 workers.
func BenchmarkTalliesHeld(b *testing.B) {
	evs := manyWorkers(1000, 200_000)
	for b.Loop() {
		ts := NewTallies()
		for _, e := range evs {
			ts.Add(e)
		}
		b.ReportMetric(float64(ts.HeldBytes())/float64(len(evs)), "held-B/event")
	}
}
