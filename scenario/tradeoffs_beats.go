package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/store"
)

// tradeBeats narrates the columns in turn; a column the run cannot fill
// (have lacks its server) is one beat that says what to pass. have nil:
// every server is there.
func tradeBeats(strategy string, p Params, have *store.Servers) []Beat {
	var bs []Beat
	for i, t := range tradeStores {
		holder, waiter := int32(2*i), int32(2*i+1)
		var part []Beat
		if strategy == "crash" {
			part = tradeCrashBeats(t, p, holder, waiter)
		} else {
			part = tradePauseBeats(t, p, holder, waiter)
		}
		if have != nil && t.missing(*have) != "" {
			res := t.res()
			part = []Beat{{part[0].ID, func(e Event) bool {
				return e.Kind == KindInit && e.Res == res && e.Code == tradeSkipped
			}, func(e Event) string { return e.Msg + "." }}}
		}
		bs = append(bs, part...)
	}
	return bs
}

func tradeCrashBeats(t tradeStore, p Params, holder, waiter int32) []Beat {
	crashed := time.Duration(-1)
	return []Beat{
		{"crash-" + t.name, by(KindCrash, holder), func(e Event) string {
			crashed = e.T
			return fmt.Sprintf("%s: %s holds %s and crashes; its connection is gone. %s wants the lock.",
				t.title, wn(e), t.lockKey(), WorkerName(waiter))
		}},
		{"freed-" + t.name, by(KindAcquired, waiter), func(e Event) string {
			blocked := e.T - crashed
			if crashed < 0 {
				blocked = 0
			}
			s := fmt.Sprintf("%s gets %s %s after the crash", wn(e), t.lockKey(), ms(blocked))
			switch {
			case blocked < p.TTL.D()/2:
				return s + ": the server ended the dead session, and its lock with it."
			default:
				return s + fmt.Sprintf(": the lock outlived its dead holder (TTL %s) — the availability a TTL costs.", ms(p.TTL.D()))
			}
		}},
	}
}

func tradePauseBeats(t tradeStore, p Params, holder, waiter int32) []Beat {
	res := t.res()
	paused, waiterFirst := time.Duration(-1), false
	since := func(e Event) time.Duration {
		if paused < 0 {
			return 0
		}
		return e.T - paused
	}
	return []Beat{
		{"pause-" + t.name, by(KindPause, holder), func(e Event) string {
			paused = e.T
			return fmt.Sprintf("%s: %s holds %s (TTL %s), reads %s and stops the world for %s. %s wants the lock.",
				t.title, wn(e), t.lockKey(), ms(p.TTL.D()), res, ms(p.Work.D()), WorkerName(waiter))
		}},
		// What comes next is the store's doing: the waiter gets in during
		// the pause, or the holder wakes first.
		{"turn-" + t.name, func(e Event) bool {
			return (e.Kind == KindAcquired && e.Worker == waiter) || (e.Kind == KindResume && e.Worker == holder)
		}, func(e Event) string {
			if e.Kind == KindResume {
				return fmt.Sprintf("%s wakes %s later: its lock held through the pause, and %s is still waiting.",
					wn(e), ms(since(e)), WorkerName(waiter))
			}
			waiterFirst = true
			s := fmt.Sprintf("%s gets %s %s into the pause: the holder's lock lapsed while it was stopped", wn(e), t.lockKey(), ms(since(e)))
			if e.Has&HasFence != 0 {
				s += fmt.Sprintf("; the new fence is %d", e.Fence)
			}
			return s + "."
		}},
		{"end-" + t.name, func(e Event) bool {
			if !waiterFirst {
				return e.Kind == KindAcquired && e.Worker == waiter
			}
			return e.Worker == holder && e.Res == res && (e.Kind == KindFenceRejected || (e.Kind == KindWrite && e.OK))
		}, func(e Event) string {
			switch {
			case e.Kind == KindAcquired:
				return fmt.Sprintf("%s gets %s only now, %s after the pause began: everyone waited. Safe, not live.", wn(e), t.lockKey(), ms(since(e)))
			case e.Kind == KindFenceRejected:
				return fmt.Sprintf("%s wakes and writes with fence %d: %s has seen a newer one and rejects it. Live and safe.", wn(e), e.Fence, res)
			}
			return fmt.Sprintf("%s wakes and writes %s = %d from its read before the pause: nothing stops it. Live, not safe.", wn(e), res, e.Stock)
		}},
	}
}

// tradeNotes fills the lab's table with the run's numbers: per column,
// the holder's acquire latency, how long the waiter was kept out after
// the crash or pause, overlaps, stale writes landed and rejected.
func tradeNotes(h Header) noteFold {
	f := &tradeFold{fault: h.Strategy, cols: make([]tradeCol, len(tradeStores))}
	for i := range f.cols {
		f.cols[i].since, f.cols[i].in = -1, -1
	}
	return f
}

type tradeFold struct {
	fault string
	cols  []tradeCol
}

type tradeCol struct {
	skipped           string
	acquire           time.Duration // the holder's acquire, call to answer
	since, in         time.Duration // the crash or pause; the waiter's acquire
	overlaps          int
	landed, rejected  int // the holder's writes after its fault
	holderRead, stale bool
}

func tradeColOf(res string) int {
	for i, t := range tradeStores {
		if t.res() == res || t.lockKey() == res {
			return i
		}
	}
	return -1
}

func (f *tradeFold) add(e *Event) {
	i := -1
	switch {
	case e.Worker >= 0 && int(e.Worker) < 2*len(tradeStores):
		i = int(e.Worker / 2)
	case e.Res != "":
		i = tradeColOf(e.Res)
	}
	if i < 0 {
		return
	}
	c, holder := &f.cols[i], e.Worker == int32(2*i)
	switch {
	case e.Kind == KindInit && e.Code == tradeSkipped:
		c.skipped = e.Msg
	case e.Kind == KindAcquired && holder && e.Has&HasCall != 0:
		c.acquire = e.T - e.Call
	case (e.Kind == KindCrash || e.Kind == KindPause) && holder && c.since < 0:
		c.since = e.T
	case e.Kind == KindAcquired && !holder && c.in < 0:
		c.in = e.T
	case e.Kind == KindViolation && e.Code == CodeOverlap:
		c.overlaps++
	case e.Kind == KindFenceRejected && holder:
		c.rejected++
	case e.Kind == KindWrite && holder && e.OK && c.in >= 0 && c.in >= c.since:
		c.landed++
	}
}

func (f *tradeFold) notes() [][2]string {
	var out [][2]string
	for i, t := range tradeStores {
		c := f.cols[i]
		if c.skipped != "" {
			_, why, _ := strings.Cut(c.skipped, " is ")
			out = append(out, [2]string{t.title, strings.TrimSuffix(why, " to fill its column")})
			continue
		}
		if c.since < 0 {
			continue
		}
		row := fmt.Sprintf("%s: kept out to the end", t.lock)
		if c.in >= 0 {
			row = fmt.Sprintf("%s: kept out %s (acquire %s)", t.lock, ms(c.in-c.since), fine(c.acquire))
		}
		if f.fault == "pause" {
			switch {
			case c.landed > 0:
				row += fmt.Sprintf(" · %d overlap · stale write landed", c.overlaps)
			case c.rejected > 0:
				row += fmt.Sprintf(" · %d overlap · stale write rejected", c.overlaps)
			default:
				row += fmt.Sprintf(" · %d overlap", c.overlaps)
			}
		}
		out = append(out, [2]string{t.title, row})
	}
	return out
}

// verdictDetail says, per scenario, what its verdict means there.
var verdictDetail = map[string]func(s *Summary) string{
	"trade-offs": func(s *Summary) string {
		if s.Strategy == "crash" && s.Cancelled+s.FailedError == 0 {
			return "Every lock was taken again after its holder died: the table says how long each store kept the others out."
		}
		if s.Overlaps > 0 {
			return "Two workers were inside at once where a lock lapsed during the pause; the table says which store's stale write landed and which one its fence stopped."
		}
		return ""
	},
}
