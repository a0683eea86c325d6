package scenario_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/spawn"
	"github.com/locklab/locklab/store/storetest"
)

// topologyRun runs a scenario to its end on a spawned topology.
func topologyRun(t *testing.T, topo string, cfg scenario.Config) *scenario.Run {
	t.Helper()
	skipRealTimeUnderRace(t) // spawned servers keep real time
	storetest.RequireBin(t, "redis-server")
	if topo == spawn.TopoSentinel {
		storetest.RequireBin(t, "redis-sentinel")
	}
	st, err := store.Open(context.Background(), store.Config{Topology: topo, PoolSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg.Params.Nodes = spawn.TopologyNodes(topo)
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A server killed with a command in flight leaves that command
	// unanswered: the run says so (a ServerError), and what was answered
	// still tells the story.
	var serverErr *scenario.ServerError
	if err := r.Wait(); err != nil && !errors.As(err, &serverErr) {
		t.Fatal(err)
	}
	return r
}

// twoHoldersAfter checks the run's verdict is UNSAFE and that an overlap
// comes after the event of kind k whose message says what.
func twoHoldersAfter(t *testing.T, r *scenario.Run, k event.Kind, what string) {
	t.Helper()
	// UNSAFE; or, when a killed server left a command unanswered,
	// INDETERMINATE with the overlap among the answered ones.
	if v := r.Summary().Verdict; !strings.HasPrefix(v, "UNSAFE") && !strings.HasPrefix(v, "INDETERMINATE") {
		t.Fatalf("verdict %q, want UNSAFE", v)
	}
	seen := false
	for _, e := range r.Log.Events() {
		if e.Kind == k && strings.Contains(e.Msg, what) {
			seen = true
		}
		if e.Kind == event.KindViolation && e.Code == check.CodeOverlap {
			if !seen {
				t.Fatalf("an overlap before the fault (%q): %s", what, e.Msg)
			}
			return
		}
	}
	t.Fatalf("no overlap after %q", what)
}

func TestFailoverOnTheEmulatedReplicaIsSimulatedAndUnsafe(t *testing.T) {
	t.Parallel()
	cfg := scenario.Config{Scenario: "failover", Strategy: "safe", Seed: 3, Params: withParams("failover", func(*event.Params) {})}
	a := run(t, nil, cfg)
	twoHoldersAfter(t, a, event.KindFailover, "write(s) it had not received are lost")
	if a.Header.Time != scenario.TimeSimulated {
		t.Fatalf("time %q, want simulated", a.Header.Time)
	}
	b := run(t, nil, cfg)
	ea, eb := a.Log.Events(), b.Log.Events()
	if len(ea) != len(eb) {
		t.Fatalf("same seed, %d then %d events", len(ea), len(eb))
	}
	for i := range ea {
		if ea[i].T != eb[i].T || ea[i].Kind != eb[i].Kind || ea[i].Worker != eb[i].Worker || ea[i].Msg != eb[i].Msg {
			t.Fatalf("same seed, event %d differs: %+v vs %+v", i, ea[i], eb[i])
		}
	}
}

func TestFailoverThroughSentinelGivesTwoHolders(t *testing.T) {
	t.Parallel()
	r := topologyRun(t, spawn.TopoSentinel, scenario.Config{Scenario: "failover", Strategy: "safe", Seed: 1,
		Params: withParams("failover", func(p *event.Params) {
			p.TTL, p.Work = event.Millis(5*time.Second), event.Millis(2500*time.Millisecond)
		})})
	twoHoldersAfter(t, r, event.KindFailover, "Sentinel promoted it")
}

func TestRedlockNodeRestartedEmptyOnSpawnedServers(t *testing.T) {
	t.Parallel()
	r := topologyRun(t, spawn.TopoRedlock, scenario.Config{Scenario: "redlock", Strategy: "redlock", Seed: 1,
		// A real redis-server's restart on a loaded machine can take longer
		// than the default 1 s TTL: a's lock would lapse before b tries.
		Params: withParams("redlock", func(p *event.Params) {
			p.Part, p.TTL, p.Work, p.MaxRetries = "restart", event.Millis(5*time.Second), event.Millis(2500*time.Millisecond), 200
		})})
	twoHoldersAfter(t, r, event.KindNodeUp, "its redis-server killed (SIGKILL) and started again")
}

// withParams is the scenario's defaults, changed by f.
func withParams(name string, f func(*event.Params)) event.Params {
	sc, _ := scenario.Lookup(name)
	p := sc.Defaults
	f(&p)
	return p
}
