package scenario_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// outcome is a finished run: its summary and its events.
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
	eachAt(t, 10, name, strategy, seeds, mod, check)
}

// eachAt is each with the embedded clock at speed.
func eachAt(t *testing.T, speed float64, name, strategy string, seeds int, mod func(*scenario.Params), check func(t *testing.T, o outcome)) {
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
		if quick { // a real server keeps real time: shorten everything, with headroom for a busy machine
			p.TTL, p.Work, p.RetryBase = p.TTL/5, p.Work/5, max(p.RetryBase/5, scenario.Millis(time.Millisecond))
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
	t.Run("embedded", func(t *testing.T) { runOn(t, nil, speed, seeds, false) })
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
	// At 2×. Never before the TTL has lapsed (the safety); within one poll
	// (10ms) and some scheduling after it (the liveness: 50ms of virtual
	// time is 25ms of real time on a busy 2-core machine).
	eachAt(t, 2, "crash", "safe", 20, nil, func(t *testing.T, o outcome) {
		// The TTL starts at w00's SET, between its attempt and its acquired
		// event; the next acquire comes at the first poll after it lapses.
		var asked, got, next, ttl time.Duration = -1, -1, -1, 0
		for _, e := range o.evs {
			switch {
			case e.Worker == 0 && e.Kind == scenario.KindAttempt && asked < 0:
				asked = e.T
			case e.Worker == 0 && e.Kind == scenario.KindAcquired:
				got, ttl = e.T, e.TTL
			case e.Worker != 0 && e.Kind == scenario.KindAcquired && next < 0:
				next = e.T
			}
		}
		if o.count(scenario.KindCrash, nil) != 1 || got < 0 || next < asked+ttl-2*time.Millisecond || next > got+ttl+50*time.Millisecond {
			t.Errorf("w00 asked at %v, held from %v with TTL %v; the next acquire came at %v", asked, got, ttl, next)
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
	eachAt(t, 4, "deadlock", "safe", 10, order("opposite", 2), func(t *testing.T, o outcome) {
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
		eachAt(t, 4, "deadlock", "safe", 10, order(ord, 2), func(t *testing.T, o outcome) {
			if o.s.Deadlocks != 0 || o.s.Overlaps != 0 || o.s.Successes != 2 {
				t.Errorf("%s: deadlocks %d, overlaps %d, done %d", ord, o.s.Deadlocks, o.s.Overlaps, o.s.Successes)
			}
		})
	}
	eachAt(t, 4, "deadlock", "safe", 10, order("opposite", 4), func(t *testing.T, o outcome) {
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
	// At 2×: its beats are hundreds of milliseconds apart.
	eachAt(t, 2, "naive-flaws", "naive", 10, nil, func(t *testing.T, o outcome) {
		// The beat the scenario says after reading PTTL from Redis (the
		// narration's own caption about the crash is not evidence).
		noTTL := o.count(scenario.KindBeat, func(e scenario.Event) bool { return e.Res == "lock:A" && strings.Contains(e.Msg, "no TTL") })
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
	eachAt(t, 2, "naive-flaws", "safe", 10, nil, func(t *testing.T, o outcome) {
		refused := o.count(scenario.KindReleaseFailed, func(e scenario.Event) bool { return e.Worker == 2 })
		if o.s.Overlaps != 0 || refused != 1 || o.count(scenario.KindBeat, func(e scenario.Event) bool { return e.Res == "lock:A" && strings.Contains(e.Msg, "no TTL") }) != 0 {
			t.Errorf("safe: overlaps %d, w02's release refused %d times", o.s.Overlaps, refused)
		}
	})
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	credits := func(o outcome) int {
		return o.count(scenario.KindWrite, func(e scenario.Event) bool { return e.Res == "credit" && e.OK })
	}
	// At 1×: the race window is the 5ms bank call, in real time too.
	eachAt(t, 1, "webhook", "none", 20, nil, func(t *testing.T, o outcome) {
		if credits(o) < 2 || o.s.Duplicates < 1 {
			t.Errorf("no lock: credited %d times", credits(o))
		}
	})
	for _, st := range []string{"safe", "idempotency"} {
		eachAt(t, 1, "webhook", st, 20, nil, func(t *testing.T, o outcome) {
			if credits(o) != 1 || o.s.Violations != 0 {
				t.Errorf("%s: credited %d times", st, credits(o))
			}
		})
	}
	eachAt(t, 1, "webhook", "fail-fast", 20, nil, func(t *testing.T, o outcome) {
		// The holder: when it asked (a), learned it had the lock (q) and released (r).
		holder := int32(-1)
		var a, q, r, ttl time.Duration = -1, -1, -1, 0
		for _, e := range o.evs {
			if e.Kind == scenario.KindAcquired {
				holder, q, ttl = e.Worker, e.T, e.TTL
			}
		}
		denied := map[int32]time.Duration{}
		for _, e := range o.evs {
			switch {
			case e.Worker == holder && e.Kind == scenario.KindAttempt:
				a = e.T
			case e.Worker == holder && e.Kind == scenario.KindRelease:
				r = e.T
			case e.Kind == scenario.KindDenied:
				denied[e.Worker] = e.T
			}
		}
		replies := 0
		for _, e := range o.evs {
			if e.Kind != scenario.KindDone || !strings.HasPrefix(e.Msg, "409") {
				continue
			}
			replies++
			if r >= 0 && e.T >= r {
				continue // the lock may have been free by the time PTTL was read
			}
			// PTTL was read between the denial and the reply; the key's
			// deadline on the server lies between a+ttl and q+ttl.
			lo, hi := a+ttl-e.T-2*time.Millisecond, q+ttl-denied[e.Worker]+2*time.Millisecond
			if e.Delay < lo || e.Delay > hi {
				t.Errorf("409 at %v says retry after %v; the lock's remaining PTTL was between %v and %v", e.T, e.Delay, lo, hi)
			}
		}
		if replies < 1 || credits(o) != 1 {
			t.Errorf("fail-fast: %d replies, %d credits", replies, credits(o))
		}
	})
}

func TestQueueDouble(t *testing.T) {
	t.Parallel()
	effects := func(o outcome) int {
		return o.count(scenario.KindWrite, func(e scenario.Event) bool { return e.Res == "effect" })
	}
	each(t, "queue-double", "plain", 10, nil, func(t *testing.T, o outcome) {
		failedDelete := o.count(scenario.KindReleaseFailed, func(e scenario.Event) bool { return strings.Contains(e.Msg, "not found / not reserved") })
		if effects(o) != 2 || o.s.Overlaps < 1 || failedDelete != 1 {
			t.Errorf("plain: effects %d, overlaps %d, failed deletes %d", effects(o), o.s.Overlaps, failedDelete)
		}
	})
	for _, st := range []string{"heartbeat", "idempotency"} {
		each(t, "queue-double", st, 10, nil, func(t *testing.T, o outcome) {
			if effects(o) != 1 || o.s.Duplicates != 0 {
				t.Errorf("%s: the effect happened %d times", st, effects(o))
			}
		})
	}
}

func TestRetryPoliciesCompared(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("retry")
	for _, workers := range []int{20, 50} {
		calls := map[string][]float64{}
		durs := map[string][]float64{}
		seeds := 20
		if testing.Short() {
			seeds = 4
		}
		for _, pol := range sc.Strategies {
			for seed := range seeds {
				p := sc.Defaults
				p.Workers = workers
				r := runAt(t, nil, 10, scenario.Config{Scenario: "retry", Strategy: pol, Seed: uint64(seed), Params: p})
				m := scenario.MeasureRetry(r.Log)
				calls[pol] = append(calls[pol], float64(m.LockCalls))
				durs[pol] = append(durs[pol], float64(m.Duration))
				if s := r.Summary(); s.Violations != 0 {
					t.Fatalf("%s: %s", pol, s.Verdict)
				}
			}
		}
		med := func(xs []float64) float64 {
			ys := append([]float64(nil), xs...)
			slices.Sort(ys)
			return ys[len(ys)/2]
		}
		for _, pol := range sc.Strategies {
			t.Logf("%d workers, %-20s median lock calls %6.0f, median duration %8.1f ms", workers, pol, med(calls[pol]), med(durs[pol])/1e6)
		}
		// The AWS post's shape: every jittered policy does less work, and
		// finishes sooner, than un-jittered exponential backoff.
		for _, pol := range []string{"full-jitter", "equal-jitter", "decorrelated-jitter"} {
			if med(calls[pol]) >= med(calls["exponential"]) || med(durs[pol]) >= med(durs["exponential"]) {
				t.Errorf("%d workers: %s (calls %.0f, %.0f ms) not ahead of exponential (calls %.0f, %.0f ms)", workers, pol,
					med(calls[pol]), med(durs[pol])/1e6, med(calls["exponential"]), med(durs["exponential"])/1e6)
			}
		}
	}
}

func TestRedlockUnderFaults(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("redlock")
	for seed := range 10 {
		r := runAt(t, nil, 2, scenario.Config{Scenario: "redlock", Strategy: "redlock", Seed: uint64(seed), Params: sc.Defaults})
		o := outcome{s: r.Summary(), evs: r.Log.Events()}
		granted := func(w int32) int {
			return o.count(scenario.KindVote, func(e scenario.Event) bool { return e.Worker == w && e.OK })
		}
		if o.count(scenario.KindAcquired, func(e scenario.Event) bool { return e.Worker == 0 }) != 1 || granted(0) != 3 {
			t.Errorf("seed %d: with 2 of 5 down, w00 got %d votes and acquired %d times", seed, granted(0), o.count(scenario.KindAcquired, func(e scenario.Event) bool { return e.Worker == 0 }))
		}
		if o.count(scenario.KindAcquired, func(e scenario.Event) bool { return e.Worker == 1 }) != 0 || granted(1) != 2 {
			t.Errorf("seed %d: with 3 of 5 down, w01 got %d votes", seed, granted(1))
		}
		for _, res := range []string{"J", "F", "P"} {
			if o.count(scenario.KindViolation, func(e scenario.Event) bool { return e.Res == res && e.Code == scenario.CodeOverlap }) != 1 {
				t.Errorf("seed %d: no two holders of %s", seed, res)
			}
		}
		if o.count(scenario.KindFailover, func(e scenario.Event) bool {
			return strings.Contains(e.Msg, "lost") && !strings.Contains(e.Msg, "the 0 write")
		}) != 1 {
			t.Errorf("seed %d: the failover should lose the write the replica had not received", seed)
		}
		if votes := o.count(scenario.KindVote, nil); votes < 5*8 {
			t.Errorf("seed %d: only %d per-node votes recorded", seed, votes)
		}
	}
	t.Run("redis-server", func(t *testing.T) {
		srvs := storetest.StartN(t, 5)
		r := run(t, storetest.URLs(srvs), scenario.Config{Scenario: "redlock", Strategy: "redlock", Seed: 1,
			Params: func() scenario.Params { p := sc.Defaults; p.TTL, p.Work = p.TTL/5, p.Work/5; return p }()})
		o := outcome{s: r.Summary(), evs: r.Log.Events()}
		if n := o.count(scenario.KindBeat, func(e scenario.Event) bool { return strings.HasPrefix(e.Msg, "not available on a real server") }); n < 3 {
			t.Errorf("a real server should say which faults it cannot inject; said %d times", n)
		}
		if o.count(scenario.KindViolation, func(e scenario.Event) bool { return e.Res == "P" }) != 1 {
			t.Error("the pause past validity needs no node fault: two holders expected on a real server too")
		}
	})
}
