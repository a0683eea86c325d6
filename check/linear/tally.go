package linear

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/check"
)

// tallyWords is check's report of the run's counts: the tally's, under
// the names the summary gives them, so the two read alike. Check counts
// nothing itself: its models judge, the tally counts.
func tallyWords(t *check.Tally) string {
	var p []string
	if t.Get(check.NHasStock) > 0 {
		p = append(p, fmt.Sprintf("sold %s of %s", thousandsOf(t.Get(check.NDoneOK)), thousandsOf(t.Get(check.NInitialStock))))
	}
	lost := thousandsOf(t.Get(check.NLostUpdates))
	if m := t.Get(check.NLostUpdatesMax); m > t.Get(check.NLostUpdates) {
		lost += " to " + thousandsOf(m)
	}
	if t.LostUnknown() {
		lost = "unknown"
	}
	p = append(p,
		"overlap entries "+thousandsOf(t.Get(check.NOverlaps)),
		"overlap pairs "+thousandsOf(t.Get(check.NOverlapPairs)),
		"lost updates "+lost,
		fmt.Sprintf("stale writes %s landed, %s refused", thousandsOf(t.Get(check.NStaleLanded)), thousandsOf(t.Get(check.NStaleRefused))),
		"duplicates "+thousandsOf(t.Get(check.NDuplicates)),
		"deadlocks "+thousandsOf(t.Get(check.NDeadlocks)),
		"violations "+thousandsOf(t.Get(check.NViolations)),
		"failed ops "+thousandsOf(t.FailedOps()))
	u := "indeterminate ops " + thousandsOf(t.UnansweredOps())
	if w := t.UnansweredWords(); w != "" {
		u += " (" + w + ")"
	}
	p = append(p, u)
	if n := t.GaveUpOps(); n > 0 {
		p = append(p, "ops a library gave up on "+thousandsOf(n)+" ("+t.GaveUpWords()+")")
	}
	if w := t.UntrackedWords(); len(w) > 0 {
		p = append(p, "untracked: "+strings.Join(w, ", "))
	}
	return strings.Join(p, "; ")
}
