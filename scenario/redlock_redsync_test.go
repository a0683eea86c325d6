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
)

// Redlock's parts played by go-redsync's Mutex, unmodified
// (redsync-quorum): each node's answer to its SET NX is a vote in the log,
// its undo and release are each node's steps, and the verdict is what the
// library did. Real time at 1× (the library reads the wall clock).
func redlockPartsWithRedsync(t *testing.T) {
	sc, err := scenario.Lookup("redlock")
	if err != nil {
		t.Fatal(err)
	}
	// votes are worker w's granted and refused votes on lock key.
	votes := func(o outcome, w int32, key string) (granted, refused map[int16]bool) {
		granted, refused = map[int16]bool{}, map[int16]bool{}
		for _, e := range o.evs {
			if e.Kind == event.KindVote && e.Worker == w && e.Res == key && e.Has&event.HasNode != 0 {
				if e.OK {
					granted[e.Node] = true
				} else {
					refused[e.Node] = true
				}
			}
		}
		return granted, refused
	}
	overlaps := func(o outcome, res string) int {
		return o.count(event.KindViolation, func(e event.Event) bool { return e.Res == res && e.Code == check.CodeOverlap })
	}
	res2part := map[string]string{"J": "clock", "F": "failover", "R": "restart"}
	// twoHolders: node 2 lost w00's key, and granted w01 too.
	twoHolders := func(res string) func(t *testing.T, o outcome) {
		return func(t *testing.T, o outcome) {
			if !strings.HasPrefix(o.s.Verdict, "UNSAFE") || overlaps(o, res) != 1 {
				t.Errorf("verdict %q, %d overlaps on %s: want UNSAFE, w01 beside w00; told %q", o.s.Verdict, overlaps(o, res), res, o.beat(res2part[res]))
			}
			a, _ := votes(o, 0, "lock:"+res)
			b, _ := votes(o, 1, "lock:"+res)
			if !a[2] || !b[2] || a[3] || a[4] {
				t.Errorf("votes granted w00 %v, w01 %v: want node 2 granting both, w00 cut off from 3 and 4", a, b)
			}
		}
	}
	for _, c := range []struct {
		part, clock string
		check       func(t *testing.T, o outcome)
	}{
		{part: "quorum", check: func(t *testing.T, o outcome) {
			if !strings.HasPrefix(o.s.Verdict, "CORRECT") || o.s.Successes != 1 {
				t.Errorf("verdict %q, %d holders: want CORRECT, w00 alone", o.s.Verdict, o.s.Successes)
			}
			a, aNo := votes(o, 0, "lock:Q")
			b, bNo := votes(o, 1, "lock:Q")
			if len(a) != 3 || !aNo[3] || !aNo[4] || len(b) != 2 || len(bNo) != 3 {
				t.Errorf("w00 granted by %v, refused by %v; w01 granted by %v, refused by %v: want 3 of 5, then 2 of 5", a, aNo, b, bNo)
			}
			undone := o.count(event.KindRelease, func(e event.Event) bool { return e.Worker == 1 && e.Code == "undo" && e.OK })
			if undone != 2 {
				t.Errorf("%d of w01's votes undone: want its 2 granted ones deleted by the library", undone)
			}
			if d, ok := o.first(event.KindDone, func(e event.Event) bool { return e.Worker == 1 }); !ok || d.Msg != "lock: not obtained: 2 of 5 nodes granted (quorum 3)" {
				t.Errorf("w01 ended %+v: want its votes counted in words", d)
			}
			if !strings.Contains(o.beat("quorum"), "a quorum of 3: w00 holds it") || !strings.Contains(o.beat("quorum-lost"), "w01 is denied") {
				t.Errorf("told %q, then %q", o.beat("quorum"), o.beat("quorum-lost"))
			}
		}},
		{part: "clock", clock: "jump", check: twoHolders("J")},
		{part: "clock", clock: "slew", check: twoHolders("J")},
		{part: "failover", check: twoHolders("F")},
		{part: "restart", check: twoHolders("R")},
		{part: "pause", check: func(t *testing.T, o outcome) {
			lost := o.count(event.KindViolation, func(e event.Event) bool { return e.Res == "P" && e.Code == check.CodeLostUpdate && e.Worker == 0 })
			if overlaps(o, "P") != 1 || lost != 1 {
				t.Errorf("%d overlaps, %d lost updates by w00: want the stale holder's write over w01's", overlaps(o, "P"), lost)
			}
			if a, _ := votes(o, 0, "lock:P"); len(a) != 5 {
				t.Errorf("w00 granted by %v: want all five", a)
			}
		}},
	} {
		t.Run(c.part+c.clock, func(t *testing.T) {
			t.Parallel()
			skipRealTimeUnderRace(t) // the library keeps real time
			p := sc.Defaults
			p.Part, p.Clock = c.part, cmpOr(c.clock, p.Clock)
			// redsync waits for each node 5% of the expiry: a 3s TTL gives
			// a busy machine 150ms a vote, and the polls that wait out a
			// lapsed key as long as they need.
			p.TTL, p.MaxRetries = event.Millis(3*time.Second), 200
			// At 1× whatever the load (not runAt's slower speed): the
			// library's validity is wall-clock time, and at a slower speed
			// the keys would outlast it on the nodes.
			st, err := store.Open(context.Background(), store.Config{Nodes: p.Nodes, PoolSize: 64, Speed: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "redlock", Strategy: "redsync-quorum", Seed: 1, Params: p})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Wait(); err != nil {
				t.Fatal(err)
			}
			o := outcome{s: r.Summary(), evs: r.Log.Events()}
			if !strings.HasPrefix(r.Header.Time, "real time: redsync-quorum reads the wall clock") {
				t.Errorf("header time %q: want real time, and why", r.Header.Time)
			}
			c.check(t, o)
		})
	}
	t.Run("fence", func(t *testing.T) {
		st, err := store.Open(context.Background(), store.Config{Nodes: 5})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		p := sc.Defaults
		p.Part = "fence"
		_, err = scenario.Start(context.Background(), st, scenario.Config{Scenario: "redlock", Strategy: "redsync-quorum", Seed: 1, Params: p})
		var pe *event.ParamError
		if !errors.As(err, &pe) || pe.Param != "part" || !strings.Contains(pe.Msg, "no fencing token") {
			t.Errorf("fence with redsync-quorum: %v, want refused for its lack of a fencing token", err)
		}
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// A node too slow for redsync: its vote is one the library gave up on
// (5% of the expiry, on its wall clock), said so — not a server that left
// it unanswered — and the four other nodes still grant the lock.
func redsyncGivesUpOnASlowNode(t *testing.T) {
	skipRealTimeUnderRace(t) // the library keeps real time
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers, p.TTL = 1, event.Millis(time.Second) // redsync waits 50ms a node
	slow := scenario.Timed{Fault: scenario.Fault{Kind: scenario.FaultNet, Worker: 0, Node: 1, D: 2 * time.Second,
		Net: store.Toxic{Kind: store.ToxicLatency, Dir: store.Down, D: 400 * time.Millisecond}}}
	st, err := store.Open(context.Background(), store.Config{Nodes: 5, PoolSize: 16, Speed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "redsync-quorum", Seed: 1, Params: p,
		Faults: []scenario.Timed{slow}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatalf("the run failed (%v): a vote the library gave up on was taken for one left unanswered", err)
	}
	o := outcome{s: r.Summary(), evs: r.Log.Events()}
	gave := o.count(event.KindVote, func(e event.Event) bool {
		return e.Node == 1 && e.Outcome == event.OutcomeGaveUp && strings.Contains(e.Msg, "redsync gave up on the node")
	})
	if gave != 1 || o.s.Successes != 1 || !strings.HasPrefix(o.s.Verdict, "CORRECT") {
		t.Errorf("%d votes given up on by node 1, %d sales, verdict %q: want node 1's vote given up on, the sale made on the other four", gave, o.s.Successes, o.s.Verdict)
	}
}

// A node restarted empty on real processes (--topology redlock), through
// redsync's Mutex: the library grants a second holder its majority.
func TestRedsyncQuorumNodeRestartedEmptyOnSpawnedServers(t *testing.T) {
	t.Parallel()
	r := topologyRun(t, spawn.TopoRedlock, scenario.Config{Scenario: "redlock", Strategy: "redsync-quorum", Seed: 1,
		// A real redis-server's restart on a loaded machine can take longer
		// than the default 1 s TTL: a's lock would lapse before b tries.
		Params: withParams("redlock", func(p *event.Params) {
			p.Part, p.TTL, p.Work, p.MaxRetries = "restart", event.Millis(5*time.Second), event.Millis(2500*time.Millisecond), 200
		})})
	twoHoldersAfter(t, r, event.KindNodeUp, "its redis-server killed (SIGKILL) and started again")
	granted := map[int32]bool{}
	for _, e := range r.Log.Events() {
		if e.Kind == event.KindVote && e.Node == 2 && e.OK && e.Res == "lock:R" {
			granted[e.Worker] = true
		}
	}
	if !granted[0] || !granted[1] {
		t.Errorf("node 2 granted %v: want w00, then w01 once it came back empty", granted)
	}
}
