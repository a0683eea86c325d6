package scenario_test

import (
	"slices"
	"strings"
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

// renewal names what really renews, from the strategy's traits: w00's
// watchdog for watchdog; for rueidislock the library itself, on its own
// timer every half TTL, which runs on through the pause while nothing
// leaves the stopped process. No beat of rueidislock's says "watchdog".
func TestRenewalNamesWhatRenews(t *testing.T) {
	t.Parallel()
	sc, err := scenario.Lookup("renewal")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		strategy, renewed, pause string
		speed                    float64
	}{
		{"watchdog", "w··'s watchdog renews the lock every TTL/3: w·· keeps being denied.",
			"w·· stops the world. Its watchdog, if it has one, stops with it.", 10},
		// Real time: at 4× its 1s validity is 250ms of this machine's.
		{"rueidislock", "rueidislock extends w··'s key itself, every 500ms (TTL/2), on a timer of its own: w·· keeps being denied.",
			"w·· stops the world. rueidislock's own timer runs on, but nothing leaves a stopped process: its extension waits for w·· to resume.", 4},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			t.Parallel()
			if scenario.WallClock(c.strategy) != "" {
				skipRealTimeUnderRace(t) // its library keeps real time
			}
			r := runAt(t, nil, c.speed, scenario.Config{Scenario: "renewal", Strategy: c.strategy, Seed: 7, Params: sc.Defaults})
			_, full := story(r)
			if !slices.Contains(full, "renewed "+c.renewed) || !slices.Contains(full, "pause "+c.pause) {
				t.Fatalf("told %q\nwant the renewed beat %q and the pause beat %q", full, c.renewed, c.pause)
			}
			if c.strategy != "watchdog" {
				for _, b := range full {
					if strings.Contains(b, "watchdog") {
						t.Errorf("beat %q names a watchdog, which %s has not", b, c.strategy)
					}
				}
			}
		})
	}
}
