package scenario_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// tradeParams are trade-offs' for its outcome tests: a TTL of 1s, a pause
// of 1.2s. A pause lasts until its waiter has settled too (the stories
// are chained by cues), so it need not outlast the TTL by a margin.
func tradeParams() event.Params {
	sc, _ := scenario.Lookup("trade-offs")
	p := sc.Defaults
	p.TTL, p.Work = event.Millis(time.Second), event.Millis(1200*time.Millisecond)
	return p
}

// tradeSeeds is how many seeds each fault of the trade-offs stories runs: its
// stories keep real time and are chained by cues, so a seed changes only
// latencies and start order; two cover those, and the deep pass runs
// twenty.
func tradeSeeds() int {
	if deep() {
		return 20
	}
	return 2
}

// tradeRuns runs trade-offs with fault over seeds 1..n, side by side, each
// on a fresh embedded store with the servers srv.
func tradeRuns(t *testing.T, fault string, srv store.Servers, n int) []outcome {
	t.Helper()
	out := make([]outcome, n)
	errs := make([]error, n)
	// Four at a time: each run keeps real time on embedded etcd and
	// Postgres beside Redis, and ten at once beside the other packages'
	// tests starved a paused holder's lease of the time its story needs.
	forEach(n, 4, func(i int) {
		cfg := scenario.Config{Scenario: "trade-offs", Strategy: fault, Params: tradeParams(), Seed: uint64(i + 1)}
		st, err := store.Open(context.Background(), store.Config{Nodes: 1, PoolSize: 16, Speed: realTimeSpeed(nil, outcomeSpeed, cfg), Servers: srv, ConnectTimeout: testConnectTimeout})
		if err != nil {
			errs[i] = err
			return
		}
		defer st.Close()
		r, err := scenario.Start(context.Background(), st, cfg)
		if err == nil {
			err = r.Wait()
		}
		if err != nil {
			errs[i] = err
			return
		}
		out[i] = outcome{s: r.Summary(), evs: r.Log.Events()}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("seed %d: %v", i+1, err)
		}
	}
	return out
}

func workerIs(w int32) func(event.Event) bool {
	return func(e event.Event) bool { return e.Worker == w }
}

func resIs(res string) func(event.Event) bool {
	return func(e event.Event) bool { return e.Res == res }
}

func tradeOffsOnServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts postgres")
	}
	srv := store.Servers{Postgres: storetest.SharedPostgres(t).URL}
	_, etcd := lock.Lookup("etcd")
	ttl := tradeParams().TTL.D()
	together(func() {
		for seed, o := range tradeRuns(t, "crash", srv, tradeSeeds()) {
			// kept says how long w's lock kept w+1 out, measured so that a
			// stall of the busy machine can only lengthen the lower bound
			// and shorten the upper one: at least from when w sent the
			// request that got the lock (its TTL cannot start earlier) to
			// when w+1's successful request came back; at most from w's
			// crash to when w+1 sent that request.
			kept := func(w int32) (least, most time.Duration, how string) {
				got, ok1 := o.first(event.KindAcquired, workerIs(w))
				c, ok2 := o.first(event.KindCrash, workerIs(w))
				in, ok3 := o.first(event.KindAcquired, workerIs(w+1))
				if !ok1 || !ok2 || !ok3 {
					t.Fatalf("seed %d: w%02d acquired %v, crashed %v; w%02d acquired %v", seed+1, w, ok1, ok2, w+1, ok3)
				}
				how = fmt.Sprintf("w%02d sent for the lock at %v, crashed at %v; w%02d was denied %d times and sent for it at %v, got it at %v",
					w, got.Start(), c.T, w+1, o.count(event.KindDenied, workerIs(w+1)), in.Start(), in.T)
				return in.T - got.Start(), in.Start() - c.T, how
			}
			if d, _, how := kept(0); d < ttl*9/10 {
				t.Errorf("seed %d: Redis freed a dead holder's lock after %v, before its TTL %v (%s)", seed+1, d, ttl, how)
			}
			if _, d, how := kept(2); d >= ttl {
				t.Errorf("seed %d: Postgres kept a dead session's lock for %v, the TTL the others wait (%s)", seed+1, d, how)
			}
			if etcd {
				if d, _, how := kept(4); d < ttl*9/10 {
					t.Errorf("seed %d: etcd freed a dead holder's lease after %v, before its TTL %v (%s)", seed+1, d, ttl, how)
				}
			}
			if o.s.Overlaps != 0 || o.s.Violations != 0 {
				t.Errorf("seed %d: crash: %s", seed+1, o.s.Verdict)
			}
			checkTradeBeats(t, o, "crash", srv)
		}
	}, func() {
		for seed, o := range tradeRuns(t, "pause", srv, tradeSeeds()) {
			overlaps := func(res string) int {
				return o.count(event.KindViolation, func(e event.Event) bool { return e.Code == check.CodeOverlap && e.Res == res })
			}
			landed := o.count(event.KindWrite, func(e event.Event) bool { return e.Worker == 0 && e.Res == "data@redis" && e.OK })
			if overlaps("data@redis") != 1 || landed != 1 {
				t.Errorf("seed %d: Redis: %d overlap(s), %d stale write(s) landed; want 1 and 1", seed+1, overlaps("data@redis"), landed)
			}
			resumed, _ := o.first(event.KindResume, workerIs(2))
			in, ok := o.first(event.KindAcquired, workerIs(3))
			if overlaps("data@postgres") != 0 || !ok || in.T < resumed.T {
				t.Errorf("seed %d: Postgres: %d overlap(s); the waiter got in at %v, the holder resumed at %v", seed+1, overlaps("data@postgres"), in.T, resumed.T)
			}
			if etcd {
				_, rejected := o.first(event.KindFenceRejected, resIs("data@etcd"))
				if !rejected || o.count(event.KindWrite, func(e event.Event) bool { return e.Worker == 4 && e.OK }) != 0 {
					t.Errorf("seed %d: etcd: the stale write was not fenced", seed+1)
				}
			}
			checkTradeBeats(t, o, "pause", srv)
		}
	})
}

func checkTradeBeats(t *testing.T, o outcome, fault string, srv store.Servers) {
	t.Helper()
	want := scenario.TradeBeatIDs(fault, tradeParams(), srv)
	if ids := beatIDs(o); !slices.Equal(ids, want) {
		t.Errorf("%s: beats %v, want %v", fault, ids, want)
	}
}

// Without a Postgres server the run goes on and its column says what to
// pass, in the log and in the summary.
func tradeOffsWithoutPostgres(t *testing.T) {
	p := tradeParams()
	p.TTL, p.Work = event.Millis(200*time.Millisecond), event.Millis(300*time.Millisecond)
	runs := runAll(t, nil, outcomeSpeed, 1, func(int) scenario.Config {
		return scenario.Config{Scenario: "trade-offs", Strategy: "crash", Params: p, Seed: 1}
	})
	s := runs[0].Summary()
	want := "not configured: pass --postgres URL or LOCKLAB_POSTGRES_URL"
	i := slices.IndexFunc(s.Notes, func(n [2]string) bool { return n[0] == "Postgres" })
	if i < 0 || s.Notes[i][1] != want {
		t.Fatalf("notes %q: want Postgres %q", s.Notes, want)
	}
	if !strings.HasPrefix(s.Verdict, "CORRECT") {
		t.Errorf("verdict %s", s.Verdict)
	}
	beats := beatIDs(outcome{evs: runs[0].Log.Events()})
	if !slices.Contains(beats, "crash-postgres") || slices.Contains(beats, "freed-postgres") {
		t.Errorf("beats %v: want Postgres' column said skipped, in one beat", beats)
	}
}
