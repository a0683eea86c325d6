package explore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
)

// racy is oversell with naive, where a short TTL and retries now and then
// let two buyers in at once.
func racy() scenario.Config {
	cfg := oversell("naive", 10)
	cfg.Params.Stock = 5
	cfg.Params.Retry = "full-jitter"
	cfg.Params.TTL = event.Millis(5e6)
	return cfg
}

func TestSweepFindsNaiveBreakingAndTheShrunkCaseStillBreaks(t *testing.T) {
	res, err := explore.Sweep(context.Background(), racy(), 1, 40, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Done != 40 || res.Interrupted {
		t.Fatalf("ran %d of 40 seeds, interrupted %v", res.Done, res.Interrupted)
	}
	v := res.Violations()
	if len(v) == 0 {
		t.Fatalf("no violation in 40 seeds: %+v", res.Rows)
	}
	first := v[0].First
	cfg := racy()
	cfg.Seed = first.Seed
	again, err := explore.Run(context.Background(), cfg, nil)
	if err != nil || again.Verdict != first.Verdict {
		t.Fatalf("seed %d again: %q, %v; the sweep saw %q", first.Seed, again.Verdict, err, first.Verdict)
	}
	s, err := explore.Shrink(context.Background(), cfg, v[0].Class, explore.Options{Jobs: 2, Budget: 300})
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome.Class != v[0].Class || s.Outcome.Workers > first.Workers || s.Outcome.Events > first.Events {
		t.Fatalf("shrunk to %+v from %+v", s.Outcome, first)
	}
	if s.Outcome.Workers == first.Workers && s.Outcome.Events == first.Events {
		t.Errorf("nothing shrank in %d runs: %d workers, %d events", s.Trials, s.Outcome.Workers, s.Outcome.Events)
	}
	// The shrunk case, written as a schedule and read back, breaks the
	// same way, and its log is the same byte for byte after the header.
	var file bytes.Buffer
	if err := schedule.Of(s.Config).Write(&file); err != nil {
		t.Fatal(err)
	}
	back, err := schedule.Read(&file)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	oa, err := explore.Run(context.Background(), s.Config, &a)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := explore.Run(context.Background(), back.Config(), &b)
	if err != nil {
		t.Fatal(err)
	}
	if oa.Class != v[0].Class || ob.Verdict != oa.Verdict {
		t.Fatalf("shrunk case %q, replayed %q; want %s", oa.Verdict, ob.Verdict, v[0].Class)
	}
	if !bytes.Equal(body(a.Bytes()), body(b.Bytes())) || len(body(a.Bytes())) == 0 {
		t.Fatalf("the replayed schedule's log differs from the shrunk run's")
	}
}

func body(log []byte) []byte {
	_, rest, _ := bytes.Cut(log, []byte("\n"))
	return rest
}

func TestSweepOfASafeLockFindsNothing(t *testing.T) {
	res, err := explore.Sweep(context.Background(), oversell("safe", 10), 1, 30, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Violations(); len(v) > 0 || res.Done != 30 {
		t.Fatalf("safe: %d seeds, violations %+v", res.Done, v)
	}
	if n := res.Sold[1]; n != 30 {
		t.Errorf("sold 1 in %d of 30 seeds, want all: %v", n, res.Sold)
	}
}

// The sweep's table does not depend on how many jobs ran it.
func TestSweepIsTheSameWithAnyJobs(t *testing.T) {
	one, err := explore.Sweep(context.Background(), racy(), 1, 24, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	four, err := explore.Sweep(context.Background(), racy(), 1, 24, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Rows) != len(four.Rows) {
		t.Fatalf("1 job: %+v; 4 jobs: %+v", one.Rows, four.Rows)
	}
	for i := range one.Rows {
		a, b := one.Rows[i], four.Rows[i]
		if a.Class != b.Class || a.Count != b.Count || a.First.Seed != b.First.Seed {
			t.Errorf("row %d: 1 job %+v, 4 jobs %+v", i, a, b)
		}
	}
}

func TestSweepStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	res, err := explore.Sweep(ctx, oversell("none", 10), 1, 100000, 2, func(done int) {
		if done == 20 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Done < 20 || res.Done > 30 {
		t.Fatalf("cancelled after 20 seeds: done %d, interrupted %v", res.Done, res.Interrupted)
	}
}

func TestARunInRealTimeIsRefused(t *testing.T) {
	cfg := oversell("naive", 2)
	cfg.Realtime = true // Run ignores it: a sweep is always simulated
	if _, err := explore.Run(context.Background(), cfg, nil); err != nil {
		t.Fatalf("embedded naive: %v", err)
	}
	sc, _ := scenario.Lookup("trade-offs")
	if sc == nil || sc.RealTime == "" {
		t.Skip("no scenario keeps real time")
	}
	_, err := explore.Run(context.Background(), scenario.Config{Scenario: sc.Name, Strategy: sc.Strategies[0], Params: sc.Defaults}, nil)
	if !explore.IsRealTime(err) {
		t.Fatalf("%s: %v, want a refusal", sc.Name, err)
	}
}

func TestClassAndSlug(t *testing.T) {
	for verdict, want := range map[string]string{
		"OVERSOLD — 3 sold of 1 in stock":           "oversold",
		"DEADLOCK, then 2 overlapping entries":      "deadlock-then-overlap",
		"CORRECT, UNDERSOLD — 1 sold of 2 in stock": "correct-undersold",
		"SAVED BY FENCING — x":                      "saved-by-fencing",
	} {
		if got := explore.Slug(explore.Class(verdict)); got != want {
			t.Errorf("%q: %q, want %q", verdict, got, want)
		}
	}
	if explore.Violating("SAVED BY FENCING") || !explore.Violating("UNSAFE") {
		t.Error("fencing saved the data; UNSAFE did not")
	}
}
