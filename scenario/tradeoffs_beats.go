package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/store"
)

// tradeBeats narrates the columns in turn; a column the run cannot fill
// (have lacks its server) is one beat that says what to pass. have nil:
// every server is there.
func tradeBeats(strategy string, p event.Params, have *store.Servers) []Beat {
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
			part = []Beat{{part[0].ID, func(e event.Event) bool {
				return e.Kind == event.KindInit && e.Res == res && e.Code == tradeSkipped
			}, func(e event.Event) string { return e.Msg + "." }}}
		}
		bs = append(bs, part...)
	}
	return bs
}

func tradeCrashBeats(t tradeStore, p event.Params, holder, waiter int32) []Beat {
	crashed := time.Duration(-1)
	return []Beat{
		{"crash-" + t.name, by(event.KindCrash, holder), func(e event.Event) string {
			crashed = e.T
			return fmt.Sprintf("%s: %s holds %s and crashes; its connection is gone. %s wants the lock.",
				t.title, wn(e), t.lockKey(), check.WorkerName(waiter))
		}},
		{"freed-" + t.name, by(event.KindAcquired, waiter), func(e event.Event) string {
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

func tradePauseBeats(t tradeStore, p event.Params, holder, waiter int32) []Beat {
	res := t.res()
	paused, waiterFirst := time.Duration(-1), false
	since := func(e event.Event) time.Duration {
		if paused < 0 {
			return 0
		}
		return e.T - paused
	}
	return []Beat{
		{"pause-" + t.name, by(event.KindPause, holder), func(e event.Event) string {
			paused = e.T
			ttl := "no TTL"
			if lockInfo(t.lock).HasTTL() {
				ttl = "TTL " + ms(p.TTL.D())
			}
			return fmt.Sprintf("%s: %s holds %s (%s), reads %s and stops the world for %s. %s wants the lock.",
				t.title, wn(e), t.lockKey(), ttl, res, ms(p.Work.D()), check.WorkerName(waiter))
		}},
		// What comes next is the store's doing: the waiter gets in during
		// the pause, or the holder wakes first.
		{"turn-" + t.name, func(e event.Event) bool {
			return (e.Kind == event.KindAcquired && e.Worker == waiter) || (e.Kind == event.KindResume && e.Worker == holder)
		}, func(e event.Event) string {
			if e.Kind == event.KindResume {
				return fmt.Sprintf("%s wakes %s later: its lock held through the pause, and %s is still waiting.",
					wn(e), ms(since(e)), check.WorkerName(waiter))
			}
			waiterFirst = true
			s := fmt.Sprintf("%s gets %s %s into the pause: the holder's lock lapsed while it was stopped", wn(e), t.lockKey(), ms(since(e)))
			if e.Has&event.HasFence != 0 {
				s += fmt.Sprintf("; the new fence is %d", e.Fence)
			}
			return s + "."
		}},
		{"end-" + t.name, func(e event.Event) bool {
			if !waiterFirst {
				return e.Kind == event.KindAcquired && e.Worker == waiter
			}
			return e.Worker == holder && e.Res == res && (e.Kind == event.KindFenceRejected || (e.Kind == event.KindWrite && e.OK))
		}, func(e event.Event) string {
			switch {
			case e.Kind == event.KindAcquired:
				return fmt.Sprintf("%s gets %s only now, %s after the pause began: everyone waited. Safe, not live.", wn(e), t.lockKey(), ms(since(e)))
			case e.Kind == event.KindFenceRejected:
				return fmt.Sprintf("%s wakes and writes with fence %d: %s has seen a newer one and rejects it. Live and safe.", wn(e), e.Fence, res)
			}
			return fmt.Sprintf("%s wakes and writes %s = %d from its read before the pause: nothing stops it. Live, not safe.", wn(e), res, e.Stock)
		}},
	}
}

// tradeNotes fills the lab's table with the run's numbers (see
// TradeTable).
func tradeNotes(h event.Header) check.NoteFold { return NewTradeTable(h) }

// TradeTable folds a trade-offs run, one event at a time, into the lab's
// table: per store, the holder's acquire latency, how long the waiter was
// kept out after the crash or pause, overlaps, stale writes landed and
// rejected. It is the run's summary notes and its panel. Its counts are
// the tally's, per worker: a column's overlaps are its two workers'.
type TradeTable struct {
	fault string
	cols  []TradeRow
	tally *check.TallyFold
}

// TradeRow is one store's column of the table.
type TradeRow struct {
	Store   string // "Redis", "Postgres", "etcd"
	Lock    string // its strategy
	Missing string // why the column is empty, when it is
	// Fault is when the holder crashed or paused (-1: not yet); In when
	// the waiter got the lock (-1: not yet).
	Fault, In time.Duration
	Acquire   time.Duration // the holder's acquire, attempt to answer
	tried     time.Duration
	Overlaps  int
	// Landed and Rejected count the holder's writes after the waiter got
	// in: stale writes.
	Landed, Rejected int
}

// NewTradeTable is an empty table for a run with header h.
func NewTradeTable(h event.Header) *TradeTable {
	f := &TradeTable{fault: h.Strategy, cols: make([]TradeRow, len(tradeStores)), tally: check.NewTallyFold()}
	for i, t := range tradeStores {
		f.cols[i] = TradeRow{Store: t.title, Lock: t.lock, Fault: -1, In: -1}
	}
	return f
}

// Rows are the table's columns so far, one per store.
func (f *TradeTable) Rows() []TradeRow {
	t := f.tally.Tally()
	for i := range f.cols {
		f.cols[i].Overlaps = t.Worker(2*i, check.WOverlaps) + t.Worker(2*i+1, check.WOverlaps)
	}
	return f.cols
}

func tradeColOf(res string) int {
	for i, t := range tradeStores {
		if t.res() == res || t.lockKey() == res {
			return i
		}
	}
	return -1
}

// Add folds e.
func (f *TradeTable) Add(e *event.Event) { f.add(e) }

func (f *TradeTable) add(e *event.Event) {
	f.tally.Add(*e)
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
	case e.Kind == event.KindInit && e.Code == tradeSkipped:
		c.Missing = e.Msg
	case e.Kind == event.KindAttempt && holder:
		c.tried = e.T
	case e.Kind == event.KindAcquired && holder:
		c.Acquire = e.T - c.tried
	case (e.Kind == event.KindCrash || e.Kind == event.KindPause) && holder && c.Fault < 0:
		c.Fault = e.T
	case e.Kind == event.KindAcquired && !holder && c.In < 0:
		c.In = e.T
	case e.Kind == event.KindFenceRejected && holder:
		c.Rejected++
	case e.Kind == event.KindWrite && holder && e.OK && c.In >= 0:
		c.Landed++
	}
}

func (f *TradeTable) Notes() [][2]string {
	var out [][2]string
	for _, c := range f.Rows() {
		if c.Missing != "" {
			_, why, _ := strings.Cut(c.Missing, " is ")
			out = append(out, [2]string{c.Store, strings.TrimSuffix(why, " to fill its column")})
			continue
		}
		if c.Fault < 0 {
			continue
		}
		row := fmt.Sprintf("%s: kept out to the end", c.Lock)
		if c.In >= 0 {
			row = fmt.Sprintf("%s: kept out %s (acquire %s)", c.Lock, ms(c.In-c.Fault), fine(c.Acquire))
		}
		if f.fault == "pause" {
			switch {
			case c.Landed > 0:
				row += fmt.Sprintf(" · %d overlap · stale write landed", c.Overlaps)
			case c.Rejected > 0:
				row += fmt.Sprintf(" · %d overlap · stale write rejected", c.Overlaps)
			default:
				row += fmt.Sprintf(" · %d overlap", c.Overlaps)
			}
		}
		out = append(out, [2]string{c.Store, row})
	}
	return out
}

// verdictDetail says, per scenario, what its verdict means there.
var verdictDetail = map[string]func(s *check.Summary) string{
	"trade-offs": func(s *check.Summary) string {
		if s.Strategy == "crash" && s.Cancelled+s.FailedError == 0 {
			return "Every lock was taken again after its holder died: the table says how long each store kept the others out."
		}
		if s.Overlaps > 0 {
			return "Two workers were inside at once where a lock lapsed during the pause; the table says which store's stale write landed and which one its fence stopped."
		}
		return ""
	},
	"leader": func(s *check.Summary) string {
		switch {
		case s.Overlaps > 0 && s.FenceRejected > 0:
			return "w01 was elected while w00 was stopped; w00 woke believing it led, but the ledger refused its older revision."
		case s.Overlaps > 0:
			return "w01 was elected while w00 was stopped, and w00 woke believing it led: two leaders acted."
		}
		return ""
	},
}

// tradeHeadline is the headline of a trade-offs beat, named for its
// store ("crash-etcd", "turn-postgres"), or of a leader beat.
func tradeHeadline(id string) (string, bool) {
	if h, ok := leaderHeadlines[id]; ok {
		return h, true
	}
	for _, t := range tradeStores {
		if id == "turn-"+t.name {
			return "who is in", true
		}
		for beat, h := range map[string]string{"crash": "crash", "freed": "free", "pause": "pause", "end": "result"} {
			if id == beat+"-"+t.name {
				return t.name + " " + h, true
			}
		}
	}
	return "", false
}

var leaderHeadlines = map[string]string{"elected": "elected", "renewing": "renewing", "paused": "stop the world",
	"new-leader": "new leader", "stale-action": "stale leader"}
