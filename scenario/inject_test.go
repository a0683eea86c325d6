package scenario_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// startWith starts a run and returns it with its store, closed at cleanup.
func startWith(t *testing.T, cfg store.Config, rc scenario.Config) (*scenario.Run, *store.Store) {
	t.Helper()
	// Faults come from this goroutine while the run goes on, as from a
	// person at the keyboard: the simulation keeps the clock's pace.
	rc.Paced = true
	st, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := scenario.Start(context.Background(), st, rc)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(); r.Wait(); st.Close() })
	return r, st
}

// firstHolder waits for the first acquire and returns the worker.
func firstHolder(t *testing.T, r *scenario.Run) event.Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range r.Log.Events() {
			if e.Kind == event.KindAcquired {
				return e
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("nobody acquired the lock")
	return event.Event{}
}

func TestInjectedCrashKeepsTheLockForItsTTL(t *testing.T) {
	// Faults from this goroutine at the pace of real time: not beside the simulated stories.
	for _, strategy := range []string{"safe", "watchdog"} {
		t.Run(strategy, func(t *testing.T) {
			sc, _ := scenario.Lookup("ttl-expiry")
			p := sc.Defaults
			p.TTL, p.Work = event.Millis(300*time.Millisecond), event.Millis(time.Second)
			r, _ := startWith(t, store.Config{}, scenario.Config{Scenario: "ttl-expiry", Strategy: strategy, Seed: 1, Params: p})
			got := firstHolder(t, r)
			what, err := r.Inject(scenario.Fault{Kind: scenario.FaultCrash, Worker: got.Worker})
			if err != nil || !strings.Contains(what, "crashed") {
				t.Fatalf("crash: %q, %v", what, err)
			}
			if _, err := r.Inject(scenario.Fault{Kind: scenario.FaultCrash, Worker: got.Worker}); err == nil {
				t.Fatal("a worker crashed twice")
			}
			if err := r.Wait(); err != nil {
				t.Fatal(err)
			}
			var crashAt, nextAt time.Duration = -1, -1
			for _, e := range r.Log.Events() {
				switch {
				case e.Kind == event.KindCrash && e.Worker == got.Worker:
					crashAt = e.T
				case crashAt >= 0 && e.Worker == got.Worker:
					t.Errorf("the crashed worker still acted: %v", e.Kind)
				case crashAt >= 0 && e.Kind == event.KindAcquired && nextAt < 0:
					nextAt = e.T
				}
			}
			if crashAt < 0 || nextAt < 0 {
				t.Fatalf("crash at %v, next acquire at %v", crashAt, nextAt)
			}
			// The key lapses a TTL after it was last set; the holder set it
			// at most a TTL before the crash (the watchdog renews at ttl/3).
			if left := nextAt - got.T; left < p.TTL.D()-5*time.Millisecond {
				t.Errorf("the next holder got in %v after the crashed holder's acquire, before the TTL %v", left, p.TTL.D())
			}
			if s := r.Summary(); s.Overlaps != 0 {
				t.Errorf("%d overlaps after a crash", s.Overlaps)
			}
		})
	}
}

func TestInjectedPauseStopsTheWatchdog(t *testing.T) {
	// Faults from this goroutine at the pace of real time: not beside the simulated stories.
	sc, _ := scenario.Lookup("ttl-expiry")
	p := sc.Defaults
	p.TTL, p.Work = event.Millis(300*time.Millisecond), event.Millis(600*time.Millisecond)
	r, _ := startWith(t, store.Config{}, scenario.Config{Scenario: "ttl-expiry", Strategy: "watchdog", Seed: 1, Params: p})
	got := firstHolder(t, r)
	if _, err := r.Inject(scenario.Fault{Kind: scenario.FaultPause, Worker: got.Worker}); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	var pause, resume, lost, other time.Duration = -1, -1, -1, -1
	for _, e := range r.Log.Events() {
		switch {
		case e.Kind == event.KindPause && e.Worker == got.Worker:
			pause = e.T
		case e.Kind == event.KindResume && e.Worker == got.Worker:
			resume = e.T
		case e.Kind == event.KindLockLost && e.Worker == got.Worker:
			lost = e.T
		case e.Kind == event.KindRenewed && e.Worker == got.Worker && pause >= 0 && resume < 0:
			t.Error("the watchdog renewed during its worker's pause")
		case e.Kind == event.KindAcquired && e.Worker != got.Worker && other < 0:
			other = e.T
		}
	}
	if pause < 0 || resume-pause < p.TTL.D()*3/2 {
		t.Fatalf("pause %v, resume %v", pause, resume)
	}
	if other < 0 || other > resume {
		t.Errorf("nobody got the lapsed lock during the pause (other %v, resume %v)", other, resume)
	}
	if lost < resume {
		t.Errorf("the paused worker learnt lock_lost at %v, before it resumed at %v", lost, resume)
	}
}

func TestInjectedNodeFaults(t *testing.T) {
	// Faults from this goroutine at the pace of real time: not beside the simulated stories.
	sc, _ := scenario.Lookup("ttl-expiry")
	p := sc.Defaults
	p.Work = event.Millis(time.Minute) // a run that outlasts the test
	r, st := startWith(t, store.Config{ReplicaLag: 100 * time.Millisecond, Speed: 0.5},
		scenario.Config{Scenario: "ttl-expiry", Strategy: "safe", Seed: 1, Params: p})
	firstHolder(t, r)
	time.Sleep(400 * time.Millisecond) // past the replica's lag: the stock is on it
	for _, f := range []scenario.FaultKind{scenario.FaultFailover, scenario.FaultClockJump, scenario.FaultNodePause,
		scenario.FaultNodePause, scenario.FaultNodeStop, scenario.FaultNodeStop, scenario.FaultNodeRestart} {
		if _, err := r.Inject(scenario.Fault{Kind: f}); err != nil {
			t.Fatalf("fault %d: %v", f, err)
		}
	}
	if _, err := r.Inject(scenario.Fault{Kind: scenario.FaultNodeStop, Node: 3}); err == nil {
		t.Error("a fault on a node the run does not have succeeded")
	}
	if st.Nodes()[0].Down() || st.Nodes()[0].Paused() {
		t.Error("toggled faults did not toggle back")
	}
	r.Stop()
	r.Wait()
	if _, err := r.Inject(scenario.Fault{Kind: scenario.FaultCrash}); !errors.Is(err, scenario.ErrRunOver) {
		t.Errorf("fault after the end: %v", err)
	}
	kinds := map[event.Kind]int{}
	for _, e := range r.Log.Events() {
		if e.Worker == event.System {
			kinds[e.Kind]++
		}
	}
	if kinds[event.KindFailover] != 1 || kinds[event.KindNodeDown] != 2 || kinds[event.KindNodeUp] != 3 {
		t.Errorf("node faults in the log: %v", kinds)
	}

	t.Run("redis-server", func(t *testing.T) {
		srv := storetest.Start(t)
		r, _ := startWith(t, store.Config{URLs: []string{srv.URL}}, scenario.Config{Scenario: "ttl-expiry", Strategy: "safe", Seed: 1, Params: p})
		_, err := r.Inject(scenario.Fault{Kind: scenario.FaultFailover})
		if err == nil || !strings.Contains(err.Error(), "not available on a real server") {
			t.Errorf("failover on a real server: %v", err)
		}
	})
}
