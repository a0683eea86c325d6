package scenario_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
)

// late-grant through the libraries, unmodified: the grant set at once is
// heard of only after the TTL, and neither library takes it. w00's first
// try is an acquire its library gave up on (not a denial: nobody held the
// lock), the caption says what the library did, and nobody is inside
// twice. Before the link was dialled ahead of the fault, the request
// itself waited for the handshake's held-up answer, and w01 got in at once.
func lateGrantThroughTheLibraries(t *testing.T) {
	sc, err := scenario.Lookup("late-grant")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ strategy, said string }{
		{"redislock", "redislock gave up at its Obtain deadline. w·· holds nothing: it stays out and asks again."},
		{"redsync", "redsync gave up per node after 5% of the expiry. w·· holds nothing: it stays out and asks again."},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			t.Parallel()
			skipRealTimeUnderRace(t) // its library keeps real time
			// Real time at 1× (slower on a busy machine): the library's
			// deadline reads the wall clock, so above 1× the fault's
			// latency, in run time, no longer outlasts it and the grant
			// is taken.
			r := runAt(t, nil, 1, scenario.Config{Scenario: "late-grant", Strategy: c.strategy, Seed: 1, Params: sc.Defaults})
			var first *event.Event
			denied := 0
			for _, e := range r.Log.Events() {
				switch {
				case e.Worker == 0 && first == nil && (e.Kind == event.KindAcquired || e.Kind == event.KindDenied || e.Kind == event.KindError):
					first = &e
				case e.Worker == 1 && e.Kind == event.KindDenied:
					denied++
				}
			}
			if first == nil || first.Kind != event.KindError || first.Outcome != event.OutcomeGaveUp || first.Code != "acquire" {
				t.Fatalf("w00's first answer %+v: want an acquire its library gave up on", first)
			}
			if denied == 0 {
				t.Errorf("w01 was never denied: w00's key was not set at once")
			}
			if _, full := story(r); !slices.Contains(full, "library "+c.said) {
				t.Errorf("told %q\nwant %q", full, c.said)
			}
			if s := r.Summary(); s.Overlaps > 0 || !strings.HasPrefix(s.Verdict, "CORRECT") || s.GaveUpOps == 0 {
				var ends []string
				for _, e := range r.Log.Events() {
					if e.Kind == event.KindDone && !e.OK {
						ends = append(ends, e.Code+": "+e.Msg)
					}
				}
				t.Errorf("verdict %q, %d overlaps, %d calls given up on: want CORRECT, none, some; failed: %q", s.Verdict, s.Overlaps, s.GaveUpOps, ends)
			}
		})
	}
}
