package timeline_test

import (
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/tui/timeline"
)

// markLog is a fight over two locks with TTLs that lapse (marks dated
// before the event that finds them), renewals, refused and foreign
// releases, lost locks, crashes, violations and overlaps.
func markLog(rng *mrand.Rand, n, workers int) *event.Log {
	kinds := []event.Kind{event.KindAttempt, event.KindAcquired, event.KindRenewed, event.KindRelease,
		event.KindReleaseFailed, event.KindLockLost, event.KindWorkStart, event.KindWorkEnd,
		event.KindWorkEnd, event.KindViolation, event.KindBeat, event.KindDenied}
	l := event.NewLog(nil, nil)
	var at time.Duration
	for range n {
		if rng.IntN(50) == 0 {
			at += time.Duration(rng.IntN(100)) * time.Millisecond
		} else {
			at += time.Duration(rng.IntN(300)) * time.Microsecond
		}
		res := []string{"lock:a", "lock:b"}[rng.IntN(2)]
		e := event.Event{T: at, Worker: int32(rng.IntN(workers)), Kind: kinds[rng.IntN(len(kinds))], Res: res}
		switch e.Kind {
		case event.KindAcquired, event.KindRenewed:
			e.TTL, e.Has = time.Duration(1+rng.IntN(20))*time.Millisecond, event.HasTTL
		case event.KindWorkStart, event.KindWorkEnd:
			e.Res = "stock"
		}
		if rng.IntN(300) == 0 {
			e.Kind = event.KindCrash
		}
		l.Append(e)
	}
	return l
}

// The marks, markers and overlaps drawn from block summaries are those a
// walk over every one of them draws, on random logs, cursors, times and
// widths.
func TestSummariesMatchAWalk(t *testing.T) {
	for seed := range uint64(30) {
		rng := mrand.New(mrand.NewPCG(seed, 11))
		workers := 2 + rng.IntN(4)
		l := markLog(rng, 100+rng.IntN(20_000), workers)
		tl := timeline.New(workers)
		tl.Catch(l)
		if len(tl.Overlaps) == 0 || len(tl.Markers) == 0 {
			t.Fatalf("seed %d: no overlaps or markers to draw", seed)
		}
		for range 30 {
			k := rng.IntN(tl.N)
			now := l.At(k).T
			if rng.IntN(3) == 0 {
				now = time.Duration(rng.Int64N(int64(tl.Last) + 1))
			}
			span := max(now, time.Millisecond)
			if rng.IntN(4) == 0 {
				span += time.Duration(rng.Int64N(int64(span)))
			}
			cols := 1 + rng.IntN(220)
			if rng.IntN(3) == 0 {
				cols = 2 + rng.IntN(6) // blocks of overlaps that start in one column and end in another
			}
			col := func(t time.Duration) int { return min(max(int(int64(t)*int64(cols)/int64(span)), 0), cols-1) }
			got, want := make([]uint32, cols), make([]uint32, cols)
			for _, lk := range tl.Locks {
				tl.MarkColumns(got, lk, k, now, span)
				clear(want)
				_, marks := tl.LockAt(lk, k)
				for _, m := range marks {
					if m.T <= now {
						want[col(m.T)] |= 1 << m.Kind
					}
				}
				for c := range want {
					if got[c] != want[c] {
						t.Fatalf("seed %d, k %d, %s, column %d of %d: marks %b, want %b", seed, k, lk.Name, c, cols, got[c], want[c])
					}
				}
			}
			tl.MarkerColumns(got, k, now, span)
			clear(want)
			for _, m := range tl.MarkersAt(k) {
				if m.T <= now {
					want[col(m.T)] |= 1 << m.Kind
				}
			}
			for c := range want {
				if got[c] != want[c] {
					t.Fatalf("seed %d, k %d, column %d of %d: markers %b, want %b", seed, k, c, cols, got[c], want[c])
				}
			}
			gotO, wantO := make([]bool, cols), make([]bool, cols)
			tl.OverlapColumns(gotO, k, now, span)
			for _, o := range tl.OverlapsAt(k) {
				if o.T > now {
					continue
				}
				end := now
				if o.EndSeq >= 0 && o.EndSeq <= int64(k) {
					end = min(o.End, now)
				}
				for c := col(o.T); c <= col(max(end, o.T)); c++ {
					wantO[c] = true
				}
			}
			for c := range wantO {
				if gotO[c] != wantO[c] {
					t.Fatalf("seed %d, k %d, column %d of %d: overlap %v, want %v", seed, k, c, cols, gotO[c], wantO[c])
				}
			}
		}
	}
}
