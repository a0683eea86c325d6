package workshop

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// playRound hosts one round of sc in room on url with the joiners (by
// default alice with 2 workers and bob with 1, his clock 3 s ahead) and
// returns its run, ended, once every worker has an outcome.
func playRound(t *testing.T, url, room, sc, strategy string, set func(*event.Params), joiners ...JoinConfig) *scenario.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang fails, it does not time a run
	defer cancel()
	def, err := scenario.Lookup(sc)
	if err != nil {
		t.Fatal(err)
	}
	p := def.Defaults
	if set != nil {
		set(&p)
	}
	if len(joiners) == 0 {
		joiners = []JoinConfig{{Name: "alice", Workers: 2}, {Name: "bob", Workers: 1, Skew: 3 * time.Second}}
	}
	h, err := OpenHost(ctx, HostConfig{URL: url, Room: room, Scenario: sc, Strategy: strategy, Params: p, Seed: 11, Lead: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, _, err := h.Open(ctx); err != ErrEmpty {
		t.Fatalf("Open with nobody in: %v, want ErrEmpty", err)
	}
	errs := make(chan error, len(joiners))
	var lanes []string
	for _, j := range joiners {
		j.URL, j.Room, j.Rounds = url, room, 1
		go func() { errs <- Join(ctx, j) }()
		for i := range j.Workers {
			lanes = append(lanes, fmt.Sprintf("%s/%d", j.Name, i+1))
		}
	}
	waitLobby(t, h, len(joiners))
	run, _, err := h.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("%s/%s: %v", sc, strategy, err)
	}
	for range joiners {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.Join(run.Header.Lanes, " "), strings.Join(lanes, " "); got != want {
		t.Fatalf("%s: lanes %q, want %q", sc, got, want)
	}
	done := map[int32]bool{}
	for _, e := range run.Log.Events() {
		if e.Kind == event.KindDone {
			done[e.Worker] = true
		}
	}
	if len(done) != len(lanes) {
		t.Fatalf("%s/%s: outcomes of %d workers, want %d", sc, strategy, len(done), len(lanes))
	}
	return run
}

// TestJoinableScenarios: every scenario other machines can join, raced by
// two joiners on a real redis-server, gives the verdict its strategy must.
// The deadlock ring runs alone, first: it needs each joiner to take its
// first lock within a second of the others. The other rounds then run side
// by side, each in its own room.
func TestJoinableScenarios(t *testing.T) {
	t.Parallel()
	srv := storetest.Start(t)
	t.Run("retry", func(t *testing.T) {
		t.Parallel()
		run := playRound(t, srv.URL, "retry", "retry", "full-jitter", func(p *event.Params) { p.Stock = 2 })
		s := run.Summary()
		if s.Successes != 2 || s.FinalStock != 0 || s.Overlaps != 0 {
			t.Fatalf("%d sold of 2, final stock %d, %d overlap(s): %s", s.Successes, s.FinalStock, s.Overlaps, s.Verdict)
		}
		scored(t, run, "buys", 2)
	})
	t.Run("webhook", func(t *testing.T) {
		t.Parallel()
		run := playRound(t, srv.URL, "webhook", "webhook", "safe", nil)
		s := run.Summary()
		if s.Duplicates != 0 || s.Successes != 3 {
			t.Fatalf("safe webhook: %d duplicates, %d ok: %s", s.Duplicates, s.Successes, s.Verdict)
		}
		scored(t, run, "credits", 1) // three deliveries answered 200, one credit
	})
	t.Run("queue-double", func(t *testing.T) {
		t.Parallel()
		run := playRound(t, srv.URL, "queue", "queue-double", "idempotency", func(p *event.Params) {
			p.TTL, p.Work = event.Millis(300*time.Millisecond), event.Millis(600*time.Millisecond)
			p.RetryBase = event.Millis(50 * time.Millisecond)
		})
		s := run.Summary()
		if s.Duplicates != 0 {
			t.Fatalf("idempotent jobs: the effect happened more than once (%d): %s", s.Duplicates, s.Verdict)
		}
		runs := 0
		for _, e := range run.Log.Events() {
			if e.Kind == event.KindWorkStart {
				runs++
			}
		}
		scored(t, run, "jobs run", runs) // the job ran again when its reservation lapsed; its effect did not
	})
	t.Run("deadlock", func(t *testing.T) {
		t.Parallel()
		run := playRound(t, srv.URL, "ring", "deadlock", "safe", func(p *event.Params) {
			p.TTL, p.Work = event.Millis(2*time.Second), event.Millis(time.Second)
		})
		s := run.Summary()
		scored(t, run, "completed", s.Successes)
		if s.Deadlocks == 0 {
			t.Fatalf("the ring alice/1 → alice/2 → bob/1 → alice/1 across two machines: no deadlock found: %s", s.Verdict)
		}
		// Every wait names its holder, the holders on the other machine too.
		for _, e := range run.Log.Events() {
			if e.Kind == event.KindWait && e.Has&event.HasPeer == 0 {
				t.Fatalf("%s waits for %s without its holder", run.Header.Lanes[e.Worker], e.Res)
			}
		}
	})
}

// scored checks that the round's scoreboard counts, in term, n deeds in
// all: what the scenario's workers do, not a buy everywhere.
func scored(t *testing.T, run *scenario.Run, term string, n int) {
	t.Helper()
	if got := scenario.ScoreTerm(run.Header.Scenario); got != term {
		t.Fatalf("%s's scoreboard counts %q, want %q", run.Header.Scenario, got, term)
	}
	sum, viol := 0, 0
	for _, s := range scenario.Scores(run.Header, run.Log.Events()) {
		sum, viol = sum+s.Did, viol+s.Violations
	}
	if sum != n {
		t.Fatalf("%s: the scoreboard's %s add up to %d, want %d", run.Header.Scenario, term, sum, n)
	}
	if s := run.Summary(); viol != s.Violations {
		t.Fatalf("%s: the scoreboard's violations add up to %d, the round's %d", run.Header.Scenario, viol, s.Violations)
	}
	// What the checker says of a worker names its lane as the room sees
	// it (alice/2), never its index (w01).
	bare := regexp.MustCompile(`\bw\d\d\b`)
	for _, e := range run.Log.Events() {
		if (e.Kind == event.KindViolation || e.Kind == event.KindDeadlock) && bare.MatchString(e.Msg) {
			t.Fatalf("%s: %s names a worker by its index: %q", run.Header.Scenario, e.Kind, e.Msg)
		}
	}
}

// TestEveryJoinableScenarioHasItsTerm: a scenario others can join says on
// its scoreboard what its workers do.
func TestEveryJoinableScenarioHasItsTerm(t *testing.T) {
	t.Parallel()
	for _, sc := range strings.Split(scenario.JoinableNames(), ", ") {
		if term := scenario.ScoreTerm(sc); term == scenario.ScoreTerm("") {
			t.Errorf("%s's scoreboard counts %q, the word for no scenario in particular", sc, term)
		}
	}
}

func TestJoinableRefusesStories(t *testing.T) {
	t.Parallel()
	for _, sc := range []string{"crash", "naive-flaws", "ttl-expiry", "fencing", "renewal", "redlock"} {
		err := scenario.Joinable(sc, "safe")
		if err == nil || !strings.Contains(err.Error(), scenario.JoinableNames()) {
			t.Errorf("%s: %v; want a refusal listing %s", sc, err, scenario.JoinableNames())
		}
	}
	if err := scenario.Joinable("oversell", "redlock"); err == nil || !strings.Contains(err.Error(), "none, naive, safe, fenced, watchdog, atomic") {
		t.Errorf("oversell with redlock: %v", err)
	}
}
