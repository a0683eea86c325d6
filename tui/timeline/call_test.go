package timeline_test

import (
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/tui/timeline"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// TestLockLaneDrawsOperationsWhereTheyRan: w00 releases (sent at 50ms,
// answered at 60ms) while w01's acquire (sent at 52ms, answered at 55ms)
// comes first in the log. Redis ran the release first: the lock lane hands
// over at 52ms, w00's lane lets go there too, and w00's lock counted its
// TTL from when its acquire was sent.
func TestLockLaneDrawsOperationsWhereTheyRan(t *testing.T) {
	l := event.NewLog(nil, nil)
	add := func(e event.Event) { l.Append(e) }
	add(event.Event{T: 0, Worker: 0, Kind: event.KindAttempt, Res: "lock:x"})
	add(event.Event{T: ms(5), Worker: 0, Kind: event.KindAcquired, Res: "lock:x", TTL: ms(100), Has: event.HasTTL}.WithCall(0))
	add(event.Event{T: ms(5), Worker: 0, Kind: event.KindWorkStart, Res: "x"})
	add(event.Event{T: ms(50), Worker: 0, Kind: event.KindWorkEnd, Res: "x"})
	add(event.Event{T: ms(52), Worker: 1, Kind: event.KindAttempt, Res: "lock:x"})
	add(event.Event{T: ms(55), Worker: 1, Kind: event.KindAcquired, Res: "lock:x", TTL: ms(100), Has: event.HasTTL}.WithCall(ms(52)))
	add(event.Event{T: ms(60), Worker: 0, Kind: event.KindRelease, Res: "lock:x"}.WithOK(true).WithCall(ms(50)))
	tl := timeline.New(2)
	tl.Catch(l)
	list, _ := tl.LockAt(tl.Locks[0], tl.N-1)
	spans := list.All()
	if len(spans) != 2 || spans[0].Holder != 0 || spans[0].T != 0 || spans[0].Deadline != ms(100) ||
		spans[1].Holder != 1 || spans[1].T != ms(52) {
		t.Fatalf("lock lane %+v: want w00 from 0 (deadline 100ms), then w01 from 52ms", spans)
	}
	w0 := tl.SpansAt(0, tl.N-1)
	if last := w0[len(w0)-1]; last.T != ms(52) {
		t.Fatalf("w00's lane lets go at %v, want 52ms", last.T)
	}
}

// TestLockLaneNeverGoesBack: over random logs whose operations carry their
// calls, the lock lane's changes are in time order, each within its
// operation's interval or after the change before it.
func TestLockLaneNeverGoesBack(t *testing.T) {
	kinds := []event.Kind{event.KindAttempt, event.KindAcquired, event.KindDenied, event.KindRelease,
		event.KindRenewed, event.KindWorkStart, event.KindWorkEnd, event.KindReleaseFailed}
	for seed := range uint64(30) {
		rng := mrand.New(mrand.NewPCG(seed, 9))
		l := event.NewLog(nil, nil)
		var at time.Duration
		for range 3000 {
			at += time.Duration(rng.IntN(4000)) * time.Microsecond
			e := event.Event{T: at, Worker: int32(rng.IntN(4)), Kind: kinds[rng.IntN(len(kinds))], Res: "lock:x"}
			if e.Kind == event.KindAcquired || e.Kind == event.KindRenewed {
				e.TTL, e.Has = time.Duration(rng.IntN(50)+1)*time.Millisecond, event.HasTTL
			}
			if e.Kind == event.KindDenied {
				e.Msg = "held"
			}
			if rng.IntN(4) > 0 {
				e = e.WithCall(at - time.Duration(rng.IntN(30_000))*time.Microsecond)
			}
			l.Append(e)
		}
		tl := timeline.New(4)
		tl.Catch(l)
		for _, lk := range tl.Locks {
			lspans := lk.Spans.All()
			for i := 1; i < len(lspans); i++ {
				if lspans[i].T < lspans[i-1].T {
					t.Fatalf("seed %d: %s's lane goes back from %v to %v (span %d)", seed, lk.Name, lspans[i-1].T, lspans[i].T, i)
				}
			}
			for _, sp := range lspans {
				e := l.At(int(sp.Seq))
				if sp.T > e.T {
					t.Fatalf("seed %d: a change drawn at %v, after its event's answer at %v", seed, sp.T, e.T)
				}
			}
		}
	}
}
