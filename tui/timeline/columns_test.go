package timeline_test

import (
	"fmt"
	mrand "math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// columnsByWalk is the straightforward picture: every span, one by one,
// marks the columns from the one it starts in to the one the next span
// starts in (the last one up to now, an outcome or a crash only its own).
// Where the lane is drawn from time buckets of width g (Grain), a span
// starts in the column its bucket starts in, never before the first.
func columnsByWalk(tl *timeline.Timeline, w, k int, now, span time.Duration, cols int) []uint16 {
	out := make([]uint16, cols)
	col := func(t time.Duration) int { return min(max(int(int64(t)*int64(cols)/int64(span)), 0), cols-1) }
	spans := tl.SpansAt(w, k)
	first := 0
	if len(spans) > 0 {
		first = col(spans[0].T)
	}
	start := func(t time.Duration) int {
		if g := tl.Grain(w, span, cols); g > 0 {
			return max(col(t/g*g), first)
		}
		return col(t)
	}
	for i, sp := range spans {
		if sp.T > now {
			break
		}
		end := col(now)
		switch {
		case i+1 < len(spans) && spans[i+1].T <= now:
			end = start(spans[i+1].T)
		case sp.State == themes.DoneOK || sp.State == themes.DoneFail || sp.State == themes.Crashed:
			end = col(sp.T)
		}
		for c := start(sp.T); c <= end; c++ {
			out[c] |= 1 << sp.State
		}
	}
	return out
}

// randomLog is a lock fight among a few workers with bursts (many events
// at one instant), long gaps, pauses, crashes, violations and outcomes.
func randomLog(rng *mrand.Rand, n, workers int, unit time.Duration, steps int) *event.Log {
	kinds := []event.Kind{event.KindAttempt, event.KindDenied, event.KindBackoff, event.KindAcquired,
		event.KindWorkStart, event.KindWorkEnd, event.KindRelease, event.KindPause, event.KindResume,
		event.KindAttempt, event.KindWorkStart, event.KindWorkEnd}
	l := event.NewLog(nil, nil)
	var at time.Duration
	for range n {
		switch r := rng.IntN(100); {
		case r < 3:
			at += time.Duration(rng.IntN(steps*1000)) * unit // a long gap
		case r < 40:
			// a burst: the same instant
		default:
			at += time.Duration(rng.IntN(steps)) * unit
		}
		e := event.Event{T: at, Worker: int32(rng.IntN(workers)), Kind: kinds[rng.IntN(len(kinds))], Res: "lock:x"}
		switch rng.IntN(400) {
		case 0:
			e.Kind = event.KindViolation
		case 1:
			e.Kind = event.KindCrash
		case 2:
			e.Kind, e.OK, e.Has = event.KindDone, rng.IntN(2) == 0, event.HasOK
		}
		l.Append(e)
	}
	return l
}

// TestColumnsMatchAWalkOverEverySpan: the lanes' per-column summaries,
// drawn from the time index, are the picture a walk over every span gives,
// on random logs, at random cursors, times, widths and spans.
func TestColumnsMatchAWalkOverEverySpan(t *testing.T) {
	coarse, all := 0, 0
	defer func() { t.Logf("%d of %d lanes drawn from buckets", coarse, all) }()
	for seed := range uint64(40) {
		rng := mrand.New(mrand.NewPCG(seed, 7))
		workers := 1 + rng.IntN(5)
		// Times in µs as the engine writes them, or in ns, so that column
		// edges fall between two nanoseconds and on events.
		unit, steps, minSpan := time.Microsecond, 3000, time.Millisecond
		if seed%3 == 0 {
			unit, steps, minSpan = time.Nanosecond, 4, 1
		}
		l := randomLog(rng, 200+rng.IntN(30_000), workers, unit, steps)
		tl := timeline.New(workers)
		tl.Catch(l)
		for range 30 {
			k := rng.IntN(tl.N)
			now := l.At(k).T
			if rng.IntN(3) == 0 {
				now = time.Duration(rng.Int64N(int64(tl.Last) + 1))
			}
			span := max(now, minSpan)
			if rng.IntN(4) == 0 {
				span += time.Duration(rng.Int64N(int64(span)))
			}
			cols := 1 + rng.IntN(220)
			all += workers
			got := make([]uint16, cols)
			for w := range workers {
				tl.Columns(got, w, k, now, span)
				if tl.Grain(w, span, cols) > 0 {
					coarse++
				}
				want := columnsByWalk(tl, w, k, now, span, cols)
				for c := range want {
					if got[c] != want[c] {
						t.Fatalf("seed %d, k %d of %d, now %v, span %v, %d cols, w%d, column %d: states %b, want %b",
							seed, k, tl.N, now, span, cols, w, c, got[c], want[c])
					}
				}
			}
		}
	}
}

// BenchmarkColumns is one frame's lane summaries alone: 64 workers × 116
// columns over the whole run, at the end of logs of 10k, 250k and 1M
// events. Its cost per frame must not grow with the log.
func BenchmarkColumns(b *testing.B) {
	for _, n := range []int{10_000, 250_000, 1_000_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			rng := mrand.New(mrand.NewPCG(1, 2))
			l := event.NewLog(nil, nil)
			var at time.Duration
			kinds := []event.Kind{event.KindAttempt, event.KindDenied, event.KindBackoff, event.KindAcquired,
				event.KindWorkStart, event.KindWorkEnd, event.KindRelease}
			for i := range n {
				at += time.Duration(rng.IntN(40)+1) * time.Microsecond
				l.Append(event.Event{T: at, Worker: int32(rng.IntN(64)), Kind: kinds[i%len(kinds)], Res: "lock:x"})
			}
			tl := timeline.New(64)
			tl.Catch(l)
			dst := make([]uint16, 116)
			b.ReportAllocs()
			cpu0, ops := cpuTime(), 0
			for b.Loop() {
				for w := range 64 {
					tl.Columns(dst, w, tl.N-1, tl.Last, tl.Last)
				}
				ops++
			}
			// On a shared machine wall time counts other processes too.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(ops), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
