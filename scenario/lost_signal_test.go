package scenario_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// A holder whose lock's own lost-lock signal stops it between its read
// and its write (a watchdog that found its key expired after a pause) has
// lost the lock: the lock's story, not a server's silence. It ends as a
// worker that lost the lock, and the run is not INCOMPLETE.
func TestALostLockIsNotAServersSilence(t *testing.T) {
	st, err := store.Open(context.Background(), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Workers, p.Stock, p.Delay, p.TTL = 1, 1, event.Millis(time.Second), event.Millis(300*time.Millisecond)
	pause := scenario.Timed{At: 100 * time.Millisecond, Fault: scenario.Fault{Kind: scenario.FaultPause, Worker: 0, D: 600 * time.Millisecond}}
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "watchdog", Params: p, Seed: 1,
		Faults: []scenario.Timed{pause}})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Wait()
	var lost bool
	var done event.Event
	for _, e := range r.Log.Events() {
		switch e.Kind {
		case event.KindLockLost:
			lost = true
		case event.KindDone:
			done = e
		}
	}
	if !lost {
		t.Fatal("the watchdog never lost the lock: the case does not happen")
	}
	if done.Code != check.FailLock || !strings.HasPrefix(done.Msg, "lock lost") {
		t.Errorf("the worker ended %q (%s), want %q: lock lost", done.Code, done.Msg, check.FailLock)
	}
	if s := r.Summary(); strings.HasPrefix(s.Verdict, "INCOMPLETE") || strings.HasPrefix(s.Verdict, "INDETERMINATE") {
		t.Errorf("verdict %q: a lost lock is not a server's error", s.Verdict)
	}
}
