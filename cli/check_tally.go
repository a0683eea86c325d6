package cli

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/scenario"
)

// tallyWords is check's report of the run's counts: the tally's, under
// the names the summary gives them, so the two read alike. Check counts
// nothing itself: its models judge, the tally counts.
func tallyWords(t *scenario.Tally) string {
	var p []string
	if t.Get(scenario.NHasStock) > 0 {
		p = append(p, fmt.Sprintf("sold %s of %s", thousandsOf(t.Get(scenario.NDoneOK)), thousandsOf(t.Get(scenario.NInitialStock))))
	}
	lost := thousandsOf(t.Get(scenario.NLostUpdates))
	if m := t.Get(scenario.NLostUpdatesMax); m > t.Get(scenario.NLostUpdates) {
		lost += " to " + thousandsOf(m)
	}
	if t.LostUnknown() {
		lost = "unknown"
	}
	p = append(p,
		"overlap entries "+thousandsOf(t.Get(scenario.NOverlaps)),
		"overlap pairs "+thousandsOf(t.Get(scenario.NOverlapPairs)),
		"lost updates "+lost,
		fmt.Sprintf("stale writes %s landed, %s refused", thousandsOf(t.Get(scenario.NStaleLanded)), thousandsOf(t.Get(scenario.NStaleRefused))),
		"duplicates "+thousandsOf(t.Get(scenario.NDuplicates)),
		"deadlocks "+thousandsOf(t.Get(scenario.NDeadlocks)),
		"violations "+thousandsOf(t.Get(scenario.NViolations)),
		"failed ops "+thousandsOf(t.FailedOps()))
	u := "indeterminate ops " + thousandsOf(t.UnansweredOps())
	if w := t.UnansweredWords(); w != "" {
		u += " (" + w + ")"
	}
	p = append(p, u)
	if w := t.UntrackedWords(); len(w) > 0 {
		p = append(p, "untracked: "+strings.Join(w, ", "))
	}
	return strings.Join(p, "; ")
}
