package schedule_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
)

// A pause pressed while a paced oversell plays stops the holder where it
// is — between its read and its write, where it never sleeps on its own —
// and the run's schedule replays that byte for byte.
func TestAPressedPauseStopsTheHolderAndReplays(t *testing.T) {
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	// The holder waits a second between its read and its write: time
	// enough, even on a busy host, to press the pause in between.
	p.Workers, p.TTL, p.Delay = 5, event.Millis(200*time.Millisecond), event.Millis(time.Second)
	cfg := scenario.Config{Scenario: "oversell", Strategy: "safe", Params: p, Seed: 1}
	holder := int32(-1)
	run, want := logOf(t, cfg, 2, func(r *scenario.Run) {
		deadline := time.Now().Add(10 * time.Second)
		for holder < 0 && time.Now().Before(deadline) {
			for _, e := range r.Log.Events() {
				if e.Kind == event.KindRead && e.Worker >= 0 {
					holder = e.Worker
				}
			}
			time.Sleep(time.Millisecond)
		}
		if _, err := r.Inject(scenario.Fault{Kind: scenario.FaultPause, Worker: holder, D: 2 * time.Second}); err != nil {
			t.Fatalf("press: %v", err)
		}
	})
	var paused, wrote time.Duration = -1, -1
	for _, e := range run.Log.Events() {
		switch {
		case e.Worker != holder:
		case e.Kind == event.KindPause:
			paused = e.T
		case e.Kind == event.KindWrite:
			wrote = e.Call
		}
	}
	if paused < 0 || wrote < paused+2*time.Second {
		t.Fatalf("%s paused at %v and sent its write at %v: want the write after the pause ends", check.WorkerName(holder), paused, wrote)
	}
	var file bytes.Buffer
	replay := cfg
	replay.Faults = run.Faults()
	if err := schedule.Of(replay).Write(&file); err != nil {
		t.Fatal(err)
	}
	back, err := schedule.Read(&file)
	if err != nil {
		t.Fatal(err)
	}
	if _, got := logOf(t, back.Config(), 0, nil); !bytes.Equal(got, want) {
		t.Fatalf("the replay differs from the run with the pressed pause:\n%s\nwant\n%s", got, want)
	}
}
