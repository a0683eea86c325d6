package scenario_test

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// TestStaleWriteIsToldAtTheWrite: in the stale-holder stories, the
// stale-write beat comes at w00's stale write (right after the checker's
// lost update on it), not at the overlap seconds before; and every beat
// of the story is told, a watchdog's included.
func TestStaleWriteIsToldAtTheWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ scenario, strategy string }{
		{"ttl-expiry", "safe"}, {"ttl-expiry", "naive"}, {"fencing", "safe"}, {"fencing", "watchdog"}, {"renewal", "watchdog"},
	} {
		t.Run(c.scenario+"/"+c.strategy, func(t *testing.T) {
			t.Parallel()
			sc, err := scenario.Lookup(c.scenario)
			if err != nil {
				t.Fatal(err)
			}
			r := runAt(t, nil, 10, scenario.Config{Scenario: c.scenario, Strategy: c.strategy, Seed: 42, Params: sc.Defaults})
			evs := r.Log.Events()
			told, _ := story(r)
			if want := sc.BeatIDs(c.strategy, sc.Defaults); !slices.Equal(told, want) {
				t.Fatalf("told %v, want %v", told, want)
			}
			for i, e := range evs {
				if e.Kind != event.KindBeat || e.Code != "stale-write" {
					continue
				}
				v := evs[i-1]
				if v.Kind != event.KindViolation || v.Code != check.CodeLostUpdate || v.Worker != 0 {
					t.Fatalf("stale-write follows %v %s by %s, not the lost update of w00's write", v.Kind, v.Code, wname(v.Worker))
				}
				if w := evs[i-2]; w.Kind != event.KindWrite || w.Worker != 0 || w.T != e.T {
					t.Fatalf("stale-write at %v, not at w00's write (%v %s at %v)", e.T, w.Kind, wname(w.Worker), w.T)
				}
				return
			}
			t.Fatal("no stale-write beat")
		})
	}
}
