package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// outcome runs a scenario and returns its summary and events.
type outcome struct {
	s   *scenario.Summary
	evs []scenario.Event
}

func (o outcome) count(k scenario.Kind, f func(scenario.Event) bool) int {
	n := 0
	for _, e := range o.evs {
		if e.Kind == k && (f == nil || f(e)) {
			n++
		}
	}
	return n
}

// each runs name/strategy over seeds on the embedded store at 10× and, with
// quick parameters, on a real redis-server; check sees every outcome.
func each(t *testing.T, name, strategy string, seeds int, mod func(*scenario.Params), check func(t *testing.T, o outcome)) {
	t.Helper()
	sc, err := scenario.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	params := func(quick bool) scenario.Params {
		p := sc.Defaults
		if mod != nil {
			mod(&p)
		}
		if quick { // a real server keeps real time: shorten everything
			p.TTL, p.Work, p.RetryBase = p.TTL/10, p.Work/10, max(p.RetryBase/10, scenario.Millis(time.Millisecond))
		}
		return p
	}
	runOn := func(t *testing.T, urls []string, speed float64, n int, quick bool) {
		for seed := range n {
			r := runAt(t, urls, speed, scenario.Config{Scenario: name, Strategy: strategy, Seed: uint64(seed), Params: params(quick)})
			o := outcome{s: r.Summary(), evs: r.Log.Events()}
			check(t, o)
			if t.Failed() {
				t.Logf("seed %d: %s", seed, o.s.Verdict)
				return
			}
		}
	}
	t.Run("embedded", func(t *testing.T) { runOn(t, nil, 10, seeds, false) })
	t.Run("redis-server", func(t *testing.T) {
		nodes := max(params(false).Nodes, 1)
		runOn(t, storetest.URLs(storetest.StartN(t, nodes)), 1, 3, true)
	})
}

func TestTTLExpiry(t *testing.T) {
	t.Parallel()
	each(t, "ttl-expiry", "safe", 20, nil, func(t *testing.T, o outcome) {
		if o.s.Overlaps < 1 || o.s.LostUpdates < 1 {
			t.Errorf("safe, TTL < work: overlaps %d, lost updates %d; want both", o.s.Overlaps, o.s.LostUpdates)
		}
	})
	each(t, "ttl-expiry", "fenced", 20, nil, func(t *testing.T, o outcome) {
		if o.s.FenceRejected < 1 || o.s.LostUpdates != 0 || o.s.FinalStock != o.s.InitialStock-int64(o.s.Successes) {
			t.Errorf("fenced: rejected %d, lost %d, stock %d→%d with %d sold", o.s.FenceRejected, o.s.LostUpdates, o.s.InitialStock, o.s.FinalStock, o.s.Successes)
		}
	})
	each(t, "ttl-expiry", "watchdog", 20, nil, func(t *testing.T, o outcome) {
		if o.s.Overlaps != 0 || o.s.Violations != 0 || o.count(scenario.KindRenewed, nil) < 3 {
			t.Errorf("watchdog: overlaps %d, renewals %d", o.s.Overlaps, o.count(scenario.KindRenewed, nil))
		}
	})
}

func TestFencing(t *testing.T) {
	t.Parallel()
	each(t, "fencing", "fenced", 20, nil, func(t *testing.T, o outcome) {
		if o.s.FenceRejected < 1 || o.s.LostUpdates != 0 || !strings.HasPrefix(o.s.Verdict, "SAVED BY FENCING") {
			t.Errorf("fenced: %s", o.s.Verdict)
		}
	})
	each(t, "fencing", "safe", 20, nil, func(t *testing.T, o outcome) {
		if o.s.LostUpdates < 1 || o.s.FenceRejected != 0 {
			t.Errorf("safe: the stale write should land: %s", o.s.Verdict)
		}
	})
}

func TestRenewal(t *testing.T) {
	t.Parallel()
	check := func(fenced bool) func(t *testing.T, o outcome) {
		return func(t *testing.T, o outcome) {
			var resumed, lost = time.Duration(-1), time.Duration(-1)
			for _, e := range o.evs {
				if e.Worker == 0 && e.Kind == scenario.KindResume {
					resumed = e.T
				}
				if e.Worker == 0 && e.Kind == scenario.KindLockLost && lost < 0 {
					lost = e.T
				}
			}
			if o.count(scenario.KindRenewed, nil) < 3 || resumed < 0 || lost < resumed {
				t.Errorf("renewals %d, resumed at %v, lock_lost at %v: want renewals, then lock_lost only after the resume", o.count(scenario.KindRenewed, nil), resumed, lost)
			}
			if got := o.count(scenario.KindAcquired, func(e scenario.Event) bool { return e.Worker != 0 }); got < 1 {
				t.Error("nobody else acquired while w00 was paused")
			}
			if fenced && (o.s.FenceRejected < 1 || o.s.LostUpdates != 0) {
				t.Errorf("fenced-watchdog: %s", o.s.Verdict)
			}
			if !fenced && o.s.Violations < 1 {
				t.Errorf("watchdog alone: the paused worker's write should land: %s", o.s.Verdict)
			}
		}
	}
	each(t, "renewal", "watchdog", 20, nil, check(false))
	each(t, "renewal", "fenced-watchdog", 20, nil, check(true))
}

func TestCrash(t *testing.T) {
	t.Parallel()
	each(t, "crash", "safe", 20, nil, func(t *testing.T, o outcome) {
		var crashed, next time.Duration = -1, -1
		var ttl time.Duration
		for _, e := range o.evs {
			if e.Kind == scenario.KindAcquired && e.Worker == 0 {
				ttl = e.TTL
			}
			if e.Kind == scenario.KindCrash {
				crashed = e.T
			}
			if e.Kind == scenario.KindAcquired && crashed >= 0 && next < 0 {
				next = e.T
			}
		}
		blocked := next - crashed
		// Blocked for the TTL: never less (the lock held), and at most one
		// poll interval and a clock tick more.
		if crashed < 0 || next < 0 || blocked < ttl-2*time.Millisecond || blocked > ttl+ttl/100+15*time.Millisecond {
			t.Errorf("blocked %v after the crash, TTL %v", blocked, ttl)
		}
		if o.s.Violations != 0 {
			t.Errorf("violations after a crash: %s", o.s.Verdict)
		}
	})
}

func TestDeadlock(t *testing.T) {
	t.Parallel()
	order := func(o string, workers int) func(*scenario.Params) {
		return func(p *scenario.Params) { p.Order, p.Workers = o, workers }
	}
	each(t, "deadlock", "safe", 10, order("opposite", 2), func(t *testing.T, o outcome) {
		dl, first := -1, -1
		for i, e := range o.evs {
			if e.Kind == scenario.KindDeadlock && dl < 0 {
				dl = i
			}
			if e.Kind == scenario.KindViolation && first < 0 {
				first = i
			}
		}
		if dl < 0 || first < dl || o.s.Overlaps < 1 {
			t.Errorf("opposite: deadlock at %d, first violation at %d: want the cycle, then the TTL-broken overlap", dl, first)
		}
	})
	for _, ord := range []string{"sorted", "all-at-once"} {
		each(t, "deadlock", "safe", 10, order(ord, 2), func(t *testing.T, o outcome) {
			if o.s.Deadlocks != 0 || o.s.Overlaps != 0 || o.s.Successes != 2 {
				t.Errorf("%s: deadlocks %d, overlaps %d, done %d", ord, o.s.Deadlocks, o.s.Overlaps, o.s.Successes)
			}
		})
	}
	each(t, "deadlock", "safe", 10, order("opposite", 4), func(t *testing.T, o outcome) {
		var cycles []string
		for _, e := range o.evs {
			if e.Kind == scenario.KindDeadlock {
				cycles = append(cycles, e.Msg)
			}
		}
		if len(cycles) != 1 || strings.Count(cycles[0], "→") != 4 {
			t.Errorf("4-ring: cycles %q, want one 4-cycle", cycles)
		}
	})
}

func TestNaiveFlaws(t *testing.T) {
	t.Parallel()
	each(t, "naive-flaws", "naive", 10, nil, func(t *testing.T, o outcome) {
		noTTL := o.count(scenario.KindBeat, func(e scenario.Event) bool { return strings.Contains(e.Msg, "no TTL") })
		foreign := 0
		holder := map[string]int32{}
		for _, e := range o.evs {
			switch e.Kind {
			case scenario.KindAcquired:
				holder[e.Res] = e.Worker
			case scenario.KindRelease:
				if h, ok := holder[e.Res]; ok && h != e.Worker && e.OK {
					foreign++
				}
			}
		}
		if noTTL != 1 || foreign < 1 || o.s.Overlaps < 1 {
			t.Errorf("naive: no-TTL beat %d, foreign deletes %d, overlaps %d", noTTL, foreign, o.s.Overlaps)
		}
	})
	each(t, "naive-flaws", "safe", 10, nil, func(t *testing.T, o outcome) {
		refused := o.count(scenario.KindReleaseFailed, func(e scenario.Event) bool { return e.Worker == 2 })
		if o.s.Overlaps != 0 || refused != 1 || o.count(scenario.KindBeat, func(e scenario.Event) bool { return strings.Contains(e.Msg, "no TTL") }) != 0 {
			t.Errorf("safe: overlaps %d, w02's release refused %d times", o.s.Overlaps, refused)
		}
	})
}
