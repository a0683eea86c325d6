package scenario_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// outcome is a finished run: its summary and its events.
type outcome struct {
	s   *check.Summary
	evs []event.Event
}

func (o outcome) count(k event.Kind, f func(event.Event) bool) int {
	n := 0
	for _, e := range o.evs {
		if e.Kind == k && (f == nil || f(e)) {
			n++
		}
	}
	return n
}

// outcomeSpeed is the embedded clock's speed for outcome tests. A story
// here turns on offsets of 100 ms of virtual time (a worker arriving after
// another, a renewal due a third of a TTL before the lock lapses): at 1× a
// busy machine would have to stall a goroutine for that long in real time
// to change it; at 10× a 10 ms stall was enough.
const outcomeSpeed = 1

// slowSpeed is the speed of stories that turn on a renewal every third of
// a 1s (or 2s) TTL: at ½× a renewal must be late by over a second of real
// time before the lock lapses under its holder.
const slowSpeed = 0.5

// naiveSpeed is naive-flaws': its beats are 50–200 ms apart, so at 1× a
// stall of tens of milliseconds on a busy machine cannot reorder them.
const naiveSpeed = 1

// limitFor is how many runs of a scenario go side by side. Redlock's
// votes must come within a tenth of the TTL in real time: runs of it side
// by side starve each other on a 2-core machine, so they go a few at a
// time (at ½×, four use the CPU two did at 1×).
func limitFor(name string) int {
	switch name {
	case "redlock":
		return 4
	}
	return concurrentRuns
}

// redlockSpeed is the Redlock scenario's own (its Speed). A vote may take
// a tenth of the TTL in virtual time before it counts as a no: at ½× that
// is 200ms of real time. At 1× it would be 100ms, and a vote beside the
// package's other tests, on a machine with two busy loops, took 104ms.
const redlockSpeed = 0.5

// each runs name/strategy over seeds on the embedded store and on a real
// redis-server; check sees every outcome.
func each(t *testing.T, name, strategy string, seeds int, mod func(*event.Params), check func(t *testing.T, o outcome)) {
	t.Helper()
	eachAt(t, outcomeSpeed, name, strategy, seeds, mod, check)
}

// eachAt is each with the embedded clock at speed. The seeds run side by
// side (they share nothing); their outcomes are checked in seed order.
func eachAt(t *testing.T, speed float64, name, strategy string, seeds int, mod func(*event.Params), check func(t *testing.T, o outcome)) {
	t.Helper()
	sc, err := scenario.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	p := sc.Defaults
	if mod != nil {
		mod(&p)
	}
	cfg := func(seed int) scenario.Config {
		return scenario.Config{Scenario: name, Strategy: strategy, Seed: uint64(seed), Params: p}
	}
	checkAll := func(t *testing.T, runs []*scenario.Run) {
		for seed, r := range runs {
			o := outcome{s: r.Summary(), evs: r.Log.Events()}
			check(t, o)
			if t.Failed() {
				t.Logf("seed %d: %s", seed, o.s.Verdict)
				return
			}
		}
	}
	// The embedded runs go on while the real server's do.
	var embedded []*scenario.Run
	var err1 error
	done := make(chan struct{})
	go func() {
		defer close(done)
		embedded, err1 = runMany(nil, speed, seeds, limitFor(name), cfg)
	}()
	// A real server keeps real time: the same story at the same pace (a
	// speed below 1× is a slow motion there), on fewer seeds.
	t.Run("redis-server", func(t *testing.T) {
		realTimeStory(t)
		checkAll(t, runAll(t, storetest.URLs(storetest.StartN(t, max(p.Nodes, 1))), min(speed, 1), 3, cfg))
	})
	<-done
	t.Run("embedded", func(t *testing.T) {
		if err1 != nil {
			t.Fatal(err1)
		}
		checkAll(t, embedded)
	})
}

// together runs fs side by side and waits for all: outcome checks of one
// scenario share nothing, and their runs mostly sleep on the clock.
func together(fs ...func()) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	wg.Wait()
}

func TestTTLExpiry(t *testing.T) {
	t.Parallel()
	together(
		func() {
			each(t, "ttl-expiry", "safe", 20, nil, func(t *testing.T, o outcome) {
				if o.s.Overlaps < 1 || o.s.LostUpdates < 1 {
					t.Errorf("safe, TTL < work: overlaps %d, lost updates %d; want both", o.s.Overlaps, o.s.LostUpdates)
				}
			})
		},
		func() {
			each(t, "ttl-expiry", "fenced", 20, nil, func(t *testing.T, o outcome) {
				if o.s.FenceRejected < 1 || o.s.LostUpdates != 0 || o.s.FinalStock != o.s.InitialStock-int64(o.s.Successes) {
					t.Errorf("fenced: rejected %d, lost %d, stock %d→%d with %d sold", o.s.FenceRejected, o.s.LostUpdates, o.s.InitialStock, o.s.FinalStock, o.s.Successes)
				}
			})
		},
		func() {
			eachAt(t, slowSpeed, "ttl-expiry", "watchdog", 20, nil, func(t *testing.T, o outcome) {
				if o.s.Overlaps != 0 || o.s.Violations != 0 || o.count(event.KindRenewed, nil) < 3 {
					t.Errorf("watchdog: overlaps %d, renewals %d", o.s.Overlaps, o.count(event.KindRenewed, nil))
				}
			})
		},
	)
}

func TestFencing(t *testing.T) {
	t.Parallel()
	together(
		func() {
			each(t, "fencing", "fenced", 20, nil, func(t *testing.T, o outcome) {
				if o.s.FenceRejected < 1 || o.s.LostUpdates != 0 || !strings.HasPrefix(o.s.Verdict, "SAVED BY FENCING") {
					t.Errorf("fenced: %s", o.s.Verdict)
				}
			})
		},
		func() {
			each(t, "fencing", "safe", 20, nil, func(t *testing.T, o outcome) {
				if o.s.LostUpdates < 1 || o.s.FenceRejected != 0 {
					t.Errorf("safe: the stale write should land: %s", o.s.Verdict)
				}
			})
		},
	)
}

func TestRenewal(t *testing.T) {
	t.Parallel()
	check := func(fenced bool) func(t *testing.T, o outcome) {
		return func(t *testing.T, o outcome) {
			var resumed, lost = time.Duration(-1), time.Duration(-1)
			for _, e := range o.evs {
				if e.Worker == 0 && e.Kind == event.KindResume {
					resumed = e.T
				}
				if e.Worker == 0 && e.Kind == event.KindLockLost && lost < 0 {
					lost = e.T
				}
			}
			if o.count(event.KindRenewed, nil) < 3 || resumed < 0 || lost < resumed {
				t.Errorf("renewals %d, resumed at %v, lock_lost at %v: want renewals, then lock_lost only after the resume", o.count(event.KindRenewed, nil), resumed, lost)
			}
			if got := o.count(event.KindAcquired, func(e event.Event) bool { return e.Worker != 0 }); got < 1 {
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
	together(
		func() {
			eachAt(t, slowSpeed, "renewal", "watchdog", 20, nil, check(false))
		},
		func() {
			eachAt(t, slowSpeed, "renewal", "fenced-watchdog", 20, nil, check(true))
		},
	)
}

func TestCrash(t *testing.T) {
	t.Parallel()
	// Never before the TTL has lapsed (the safety); as soon as it has (the
	// liveness): the first attempt made after the lapse gets the lock.
	each(t, "crash", "safe", 20, nil, func(t *testing.T, o outcome) {
		// The TTL starts at w00's SET, between its attempt and its acquired
		// event: it has lapsed by got+ttl at the latest.
		var asked, got, next, nextSent, ttl time.Duration = -1, -1, -1, -1, 0
		for _, e := range o.evs {
			switch {
			case e.Worker == 0 && e.Kind == event.KindAttempt && asked < 0:
				asked = e.T
			case e.Worker == 0 && e.Kind == event.KindAcquired:
				got, ttl = e.T, e.TTL
			case e.Worker != 0 && e.Kind == event.KindAcquired && next < 0:
				next, nextSent = e.T, e.Call
			}
		}
		if o.count(event.KindCrash, nil) != 1 || got < 0 || next < asked+ttl-2*time.Millisecond {
			t.Errorf("w00 asked at %v, held from %v with TTL %v; the next acquire came at %v", asked, got, ttl, next)
		}
		// Once the TTL has lapsed, no attempt is turned away unless another
		// worker's may have got the lock first (it was sent before the
		// refusal came back). A real server counts expiry from its own
		// cached millisecond clock: a few ms of grace.
		const grace = 5 * time.Millisecond
		for _, e := range o.evs {
			if e.Worker != 0 && e.Kind == event.KindDenied && got >= 0 && e.Call >= got+ttl+grace && (next < 0 || nextSent > e.T) {
				t.Errorf("w%02d asked at %v, after the TTL lapsed (by %v), and was turned away at %v; the next acquire came at %v\n%s",
					e.Worker, e.Call, got+ttl, e.T, next, allSteps(o.evs))
				break
			}
		}
		if next < 0 {
			t.Error("nobody acquired after the crash")
		}
		if o.s.Violations != 0 {
			t.Errorf("violations after a crash: %s", o.s.Verdict)
		}
	})
}

func TestDeadlock(t *testing.T) {
	t.Parallel()
	order := func(o string, workers int) func(*event.Params) {
		return func(p *event.Params) { p.Order, p.Workers = o, workers }
	}
	together(func() {
		eachAt(t, outcomeSpeed, "deadlock", "safe", 10, order("opposite", 2), func(t *testing.T, o outcome) {
			dl, first := -1, -1
			for i, e := range o.evs {
				if e.Kind == event.KindDeadlock && dl < 0 {
					dl = i
				}
				if e.Kind == event.KindViolation && first < 0 {
					first = i
				}
			}
			if dl < 0 || first < dl || o.s.Overlaps < 1 {
				t.Errorf("opposite: deadlock at %d, first violation at %d: want the cycle, then the TTL-broken overlap", dl, first)
			}
		})
	}, func() {
		for _, ord := range []string{"sorted", "all-at-once"} {
			eachAt(t, outcomeSpeed, "deadlock", "safe", 10, order(ord, 2), func(t *testing.T, o outcome) {
				if o.s.Deadlocks != 0 || o.s.Overlaps != 0 || o.s.Successes != 2 {
					t.Errorf("%s: deadlocks %d, overlaps %d, done %d", ord, o.s.Deadlocks, o.s.Overlaps, o.s.Successes)
				}
			})
		}
	}, func() {
		eachAt(t, outcomeSpeed, "deadlock", "safe", 10, order("opposite", 4), func(t *testing.T, o outcome) {
			var cycles []string
			for _, e := range o.evs {
				if e.Kind == event.KindDeadlock {
					cycles = append(cycles, e.Msg)
				}
			}
			if len(cycles) != 1 || strings.Count(cycles[0], "→") != 4 {
				t.Errorf("4-ring: cycles %q, want one 4-cycle", cycles)
			}
		})
	})
}

func TestNaiveFlaws(t *testing.T) {
	t.Parallel()
	eachAt(t, naiveSpeed, "naive-flaws", "naive", 10, nil, func(t *testing.T, o outcome) {
		// The beat the scenario says after reading PTTL from Redis (the
		// narration's own caption about the crash is not evidence).
		noTTL := o.count(event.KindBeat, func(e event.Event) bool { return e.Res == "lock:A" && strings.Contains(e.Msg, "no TTL") })
		foreign := 0
		holder := map[string]int32{}
		for _, e := range o.evs {
			switch e.Kind {
			case event.KindAcquired:
				holder[e.Res] = e.Worker
			case event.KindRelease:
				if h, ok := holder[e.Res]; ok && h != e.Worker && e.OK {
					foreign++
				}
			}
		}
		if noTTL != 1 || foreign < 1 || o.s.Overlaps < 1 {
			t.Errorf("naive: no-TTL beat %d, foreign deletes %d, overlaps %d", noTTL, foreign, o.s.Overlaps)
		}
	})
	eachAt(t, naiveSpeed, "naive-flaws", "safe", 10, nil, func(t *testing.T, o outcome) {
		refused := o.count(event.KindReleaseFailed, func(e event.Event) bool { return e.Worker == 2 })
		if o.s.Overlaps != 0 || refused != 1 || o.count(event.KindBeat, func(e event.Event) bool { return e.Res == "lock:A" && strings.Contains(e.Msg, "no TTL") }) != 0 {
			t.Errorf("safe: overlaps %d, w02's release refused %d times\n%s", o.s.Overlaps, refused, allSteps(o.evs))
		}
	})
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	credits := func(o outcome) int {
		return o.count(event.KindWrite, func(e event.Event) bool { return e.Res == "credit" && e.OK })
	}
	// Without a lock every delivery checks before any calls the bank (they
	// arrived at once), so each finds no record and credits: in
	// simulation and in real time, on a busy machine too.
	eachAt(t, 1, "webhook", "none", 20, nil, func(t *testing.T, o outcome) {
		if n := o.s.Workers; credits(o) != n || o.s.Duplicates != n-1 {
			t.Errorf("no lock: credited %d times, %d duplicate(s); want %d and %d", credits(o), o.s.Duplicates, n, n-1)
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
		// The holder: when it asked (a), learned it had the lock (q) and began
		// to release it (r).
		holder := int32(-1)
		var a, q, r, ttl time.Duration = -1, -1, -1, 0
		for _, e := range o.evs {
			if e.Kind == event.KindAcquired {
				holder, q, ttl = e.Worker, e.T, e.TTL
			}
		}
		denied := map[int32]time.Duration{}
		for _, e := range o.evs {
			switch {
			case e.Worker == holder && e.Kind == event.KindAttempt:
				a = e.T
			case e.Worker == holder && e.Kind == event.KindWorkEnd:
				// The release is sent right after; its event is stamped
				// when the answer comes back, after the key is gone.
				r = e.T
			case e.Kind == event.KindDenied:
				denied[e.Worker] = e.T
			}
		}
		replies := 0
		for _, e := range o.evs {
			if e.Kind != event.KindDone || !strings.HasPrefix(e.Msg, "409") {
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
		return o.count(event.KindWrite, func(e event.Event) bool { return e.Res == "effect" })
	}
	together(func() {
		each(t, "queue-double", "plain", 10, nil, func(t *testing.T, o outcome) {
			failedDelete := o.count(event.KindReleaseFailed, func(e event.Event) bool { return strings.Contains(e.Msg, "not found / not reserved") })
			if effects(o) != 2 || o.s.Overlaps < 1 || failedDelete != 1 {
				t.Errorf("plain: effects %d, overlaps %d, failed deletes %d", effects(o), o.s.Overlaps, failedDelete)
			}
		})
	}, func() {
		eachAt(t, slowSpeed, "queue-double", "heartbeat", 10, nil, func(t *testing.T, o outcome) {
			if effects(o) != 1 || o.s.Duplicates != 0 {
				t.Errorf("heartbeat: the effect happened %d times", effects(o))
			}
		})
	}, func() {
		for _, st := range []string{"idempotency"} {
			each(t, "queue-double", st, 10, nil, func(t *testing.T, o outcome) {
				if effects(o) != 1 || o.s.Duplicates != 0 {
					t.Errorf("%s: the effect happened %d times", st, effects(o))
				}
				// The job ran twice, its effect once: not unsafe.
				if !strings.HasPrefix(o.s.Verdict, "SAVED BY IDEMPOTENCY") {
					t.Errorf("%s: an effect kept single is headlined %q", st, o.s.Verdict)
				}
			})
		}
	})
}

// TestRetryPoliciesCompared runs before the package's parallel tests, not
// beside them, as TestLocksNeverOversell does: its un-jittered runs wake
// every worker of twenty runs at once, and those storms keep the test
// binary's other goroutines from a core for over 100ms — longer than a
// Redlock vote may take in the stories that would run beside it.
func TestRetryPoliciesCompared(t *testing.T) {
	sc, _ := scenario.Lookup("retry")
	for _, workers := range []int{20, 50} {
		calls := map[string][]float64{}
		durs := map[string][]float64{}
		seeds := 20
		if testing.Short() {
			seeds = 4
		}
		// Every policy × seed at once, at 10×: the comparison is of medians
		// over many runs, far apart, and holds on a busy machine.
		// The TTL is a safety net this comparison does not measure (the
		// work inside is 1ms); at 10× the default 2s would be 200ms of real
		// time, which a busy machine can stall a holder through.
		p := sc.Defaults
		p.Workers, p.TTL = workers, event.Millis(time.Minute)
		pols := sc.Strategies
		cfg := func(i int) scenario.Config {
			return scenario.Config{Scenario: "retry", Strategy: pols[i/seeds], Seed: uint64(i % seeds), Params: p}
		}
		// Un-jittered exponential backoff sleeps for most of its tens of
		// seconds: its runs go side by side, beside the busier others.
		runs := make([]*scenario.Run, len(pols)*seeds)
		var errs [2]error
		var wg sync.WaitGroup
		for k, sleepy := range []bool{false, true} {
			var idx []int
			for i := range runs {
				if (pols[i/seeds] == "exponential") == sleepy {
					idx = append(idx, i)
				}
			}
			limit := busyRuns
			if sleepy {
				limit = len(idx)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				rs, err := runMany(nil, 10, len(idx), limit, func(j int) scenario.Config { return cfg(idx[j]) })
				errs[k] = err
				for j, r := range rs {
					runs[idx[j]] = r
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs[:]...); err != nil {
			t.Fatal(err)
		}
		for i, r := range runs {
			pol := pols[i/seeds]
			m := scenario.MeasureRetry(r.Log)
			calls[pol] = append(calls[pol], float64(m.LockCalls))
			durs[pol] = append(durs[pol], float64(m.Duration))
			if s := r.Summary(); s.Violations != 0 {
				t.Fatalf("%s: %s", pol, s.Verdict)
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
	runs, err := runMany(nil, redlockSpeed, 10, limitFor("redlock"), func(seed int) scenario.Config {
		return scenario.Config{Scenario: "redlock", Strategy: "redlock", Seed: uint64(seed), Params: sc.Defaults}
	})
	if err != nil {
		t.Fatal(err)
	}
	for seed, r := range runs {
		o := outcome{s: r.Summary(), evs: r.Log.Events()}
		granted := func(w int32) int {
			return o.count(event.KindVote, func(e event.Event) bool { return e.Worker == w && e.OK })
		}
		if o.count(event.KindAcquired, func(e event.Event) bool { return e.Worker == 0 }) != 1 || granted(0) != 3 {
			t.Errorf("seed %d: with 2 of 5 down, w00 got %d votes and acquired %d times", seed, granted(0), o.count(event.KindAcquired, func(e event.Event) bool { return e.Worker == 0 }))
		}
		if o.count(event.KindAcquired, func(e event.Event) bool { return e.Worker == 1 }) != 0 || granted(1) != 2 {
			t.Errorf("seed %d: with 3 of 5 down, w01 got %d votes", seed, granted(1))
		}
		for _, res := range []string{"J", "F", "P"} {
			if o.count(event.KindViolation, func(e event.Event) bool { return e.Res == res && e.Code == check.CodeOverlap }) != 1 {
				t.Errorf("seed %d: no two holders of %s", seed, res)
			}
		}
		if o.count(event.KindFailover, func(e event.Event) bool {
			return strings.Contains(e.Msg, "lost") && !strings.Contains(e.Msg, "the 0 write")
		}) != 1 {
			t.Errorf("seed %d: the failover should lose the write the replica had not received", seed)
		}
		if votes := o.count(event.KindVote, nil); votes < 5*8 {
			t.Errorf("seed %d: only %d per-node votes recorded", seed, votes)
		}
	}
	t.Run("redis-server", func(t *testing.T) {
		realTimeStory(t)
		srvs := storetest.StartN(t, 5)
		r := run(t, storetest.URLs(srvs), scenario.Config{Scenario: "redlock", Strategy: "redlock", Seed: 1,
			Params: func() event.Params { p := sc.Defaults; p.TTL, p.Work = p.TTL/5, p.Work/5; return p }()})
		o := outcome{s: r.Summary(), evs: r.Log.Events()}
		if n := o.count(event.KindBeat, func(e event.Event) bool { return strings.HasPrefix(e.Msg, "not available on a real server") }); n < 3 {
			t.Errorf("a real server should say which faults it cannot inject; said %d times", n)
		}
		if o.count(event.KindViolation, func(e event.Event) bool { return e.Res == "P" && e.Code == check.CodeOverlap }) != 1 {
			t.Error("the pause past validity needs no node fault: two holders expected on a real server too")
		}
	})
}

func allSteps(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%12v %12v %-4s %-14s %-8s %s %s\n", e.T, e.Call, wname(e.Worker), e.Kind, e.Res, e.Code, e.Msg)
	}
	return b.String()
}
