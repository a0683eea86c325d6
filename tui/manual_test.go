package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/levels"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// levelSession starts the first level in the scheduler mode.
func levelSession(t *testing.T, steps []scenario.Step, from uint64) *session {
	t.Helper()
	l, err := levels.Lookup("first-sale")
	if err != nil {
		t.Fatal(err)
	}
	r := l.Run
	s, err := startSession(&Options{}, runSpec{Scenario: r.Scenario, Strategy: r.Strategy, Params: r.Params, Seed: r.Seed,
		Manual: true, Level: l, Steps: steps, From: from})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// ask waits for the run's next question.
func ask(t *testing.T, m *manual) *question {
	t.Helper()
	for range 2000 {
		if q, _ := m.asking(); q != nil {
			return q
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the run asked nothing")
	return nil
}

// The person chooses every step: both workers read before either
// writes, the checker finds the oversell, the level is won; undo asks
// the last step again, with the same choices.
func TestSchedulerModeWinsAndUndoes(t *testing.T) {
	s := levelSession(t, nil, 0)
	m := s.man
	var asked []uint64
	for _, lane := range []string{"w00", "w00", "w01", "w01", "w00", "w01"} {
		q := ask(t, m)
		asked = append(asked, q.step)
		i := -1
		for j, c := range q.choices {
			if c.lane == lane {
				i = j
			}
		}
		if !m.pick(i) {
			t.Fatalf("step %d: %s is no choice of %v", q.step, lane, q.choices)
		}
	}
	<-s.run.Done()
	m.checkWin(s.run, 0, s.run.Log.Len())
	won := m.result()
	if won == nil || len(won.moves) != 6 {
		t.Fatalf("not won: %+v (hand %v)", won, s.run.Hand())
	}
	if m.pick(0) {
		t.Fatal("a finished run took an answer")
	}
	hand := s.run.Hand()
	// Undo: the last of the person's steps is asked again.
	last := hand[len(hand)-1]
	for m.laneOf(last.Actor) == "" {
		hand = hand[:len(hand)-1]
		last = hand[len(hand)-1]
	}
	u := levelSession(t, hand[:len(hand)-1], last.N)
	q := ask(t, u.man)
	if q.step != last.N || q.step != asked[len(asked)-1] {
		t.Fatalf("undo asked step %d, want %d", q.step, last.N)
	}
	if len(u.man.moves(u.run.Hand())) != 5 {
		t.Fatalf("undo kept %v, want five of the person's steps", u.run.Hand())
	}
}

// space leaves steps to the seed until two workers could move.
func TestSchedulerModeSeedSkips(t *testing.T) {
	s := levelSession(t, nil, 0)
	q := ask(t, s.man)
	s.man.seed()
	q2 := ask(t, s.man)
	if q2.step <= q.step || len(q2.choices) < 2 {
		t.Fatalf("after space: step %d with %d choices, want a later step with two", q2.step, len(q2.choices))
	}
}

// Every shipped level reads, names a goal and a scenario that exists.
func TestLevelsRead(t *testing.T) {
	all := levels.All()
	if len(all) < 4 {
		t.Fatalf("%d levels", len(all))
	}
	for _, l := range all {
		if _, err := scenario.Lookup(l.Run.Scenario); err != nil {
			t.Errorf("%s: %v", l.Name, err)
		}
	}
}

// A branch from an event of a finished run is that run up to the event's
// step, then asks who moves next; choosing otherwise changes the verdict.
func TestBranchFromAnEvent(t *testing.T) {
	l, _ := levels.Lookup("first-sale")
	r := l.Run
	orig, err := startSession(&Options{}, runSpec{Scenario: r.Scenario, Strategy: r.Strategy, Params: r.Params, Seed: r.Seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(orig.stop)
	<-orig.run.Done()
	sum := orig.run.Summary()
	// The first read of the stock: the branch starts after it.
	k := -1
	for i := range orig.log.Len() {
		if orig.log.At(i).Kind == event.KindRead {
			k = i
			break
		}
	}
	step := orig.run.StepAt(k)
	if k < 0 || step == 0 {
		t.Fatalf("no read, or no step for it (event %d, step %d)", k, step)
	}
	br, err := startSession(&Options{}, runSpec{Scenario: r.Scenario, Strategy: r.Strategy, Params: r.Params, Seed: r.Seed,
		Manual: true, From: step + 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(br.stop)
	q := ask(t, br.man)
	if q.step != step+1 {
		t.Fatalf("the branch asks at step %d, want %d", q.step, step+1)
	}
	for i := 0; i <= k; i++ {
		a, b := orig.log.At(i), br.log.At(i)
		if a.Kind != b.Kind || a.T != b.T || a.Worker != b.Worker {
			t.Fatalf("event %d differs before the branch: %+v / %+v", i, a, b)
		}
	}
	// The reader writes before anyone else reads: one sale (both are
	// inside already, without a lock: an overlap, no oversell).
	reader := check.WorkerName(orig.log.At(k).Worker)
	for {
		q, _ := br.man.asking()
		if q == nil {
			select {
			case <-br.run.Done():
			default:
				time.Sleep(time.Millisecond)
				continue
			}
			break
		}
		i := 0
		for j, c := range q.choices {
			if c.lane == reader {
				i = j
			}
		}
		br.man.pick(i)
	}
	<-br.run.Done()
	got := br.run.Summary().Verdict
	if !strings.HasPrefix(sum.Verdict, "OVERSOLD") || strings.HasPrefix(got, "OVERSOLD") || got == sum.Verdict {
		t.Fatalf("branch %q, original %q: want the original oversold and the branch not", got, sum.Verdict)
	}
}

// Letting time pass (w) is a hand-chosen step too: in the short-TTL level
// the seed's run is correct, while holding w00 back past its TTL lets w01
// in and a write rests on a stale read; the same steps give the same log.
func TestWaitingWinsTheShortTTLLevel(t *testing.T) {
	l, err := levels.Lookup("short-ttl")
	if err != nil {
		t.Fatal(err)
	}
	w := scenario.WaitStep
	plan := []scenario.Step{{N: 3, Actor: w}, {N: 3, Actor: "w00"}, {N: 4, Actor: "w01"}, {N: 5, Actor: "w01"}, {N: 6, Actor: "w00"}, {N: 7, Actor: w}, {N: 7, Actor: w}, {N: 7, Actor: w}, {N: 7, Actor: w}, {N: 7, Actor: w},
		{N: 7, Actor: "w00"}, {N: 8, Actor: "w00"}, {N: 9, Actor: w}, {N: 9, Actor: "w00"}, {N: 10, Actor: w}, {N: 10, Actor: "w01"}, {N: 11, Actor: "w00"}, {N: 12, Actor: "w00"}, {N: 13, Actor: w}, {N: 13, Actor: "w01"},
		{N: 14, Actor: w}, {N: 14, Actor: "w01"}, {N: 15, Actor: w}, {N: 15, Actor: w}, {N: 15, Actor: "w00"}, {N: 16, Actor: w}, {N: 16, Actor: "w00"}, {N: 17, Actor: w}, {N: 17, Actor: w}, {N: 17, Actor: "w00"},
		{N: 18, Actor: w}, {N: 18, Actor: w}, {N: 18, Actor: "w01"}}
	run := func(steps []scenario.Step) (string, string) {
		cfg := l.Run.Config()
		cfg.Steps = steps
		var buf strings.Builder
		cfg.Events = &buf
		st, err := store.Open(context.Background(), store.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		r, err := scenario.Start(context.Background(), st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		// A command held back past its deadline times out, as on a slow
		// network: the run may end unanswered; the log says what happened.
		_ = r.Wait()
		_, body, _ := strings.Cut(buf.String(), "\n")
		return body, r.Summary().Verdict
	}
	seeded, v := run(nil)
	if !strings.HasPrefix(v, "CORRECT") || strings.Contains(seeded, `"code":"lost_update"`) {
		t.Fatalf("the seed's run: %s", v)
	}
	a, v := run(plan)
	if !strings.Contains(a, `"code":"lost_update"`) {
		t.Fatalf("waiting past the TTL: %s, want a lost update", v)
	}
	if b, _ := run(plan); a != b {
		t.Fatal("the same steps with waits gave two logs")
	}
}
