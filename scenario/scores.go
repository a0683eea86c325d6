package scenario

import (
	"strings"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// Score is one attendee's line on a shared race's scoreboard: lanes named
// NAME/N belong to attendee NAME.
type Score struct {
	Name    string
	Workers int
	// Did counts what its workers did in the scenario's own terms (see
	// ScoreTerm): buys, credits, jobs run, completed.
	Did        int
	Denials    int  // lock attempts refused
	Violations int  // violations its lanes caused (their entry, write or sale)
	Done       int  // workers with an outcome
	Gone       bool // disconnected during the round
}

// deed is what a scoreboard counts of a scenario's workers: a count of
// the tally's, per worker.
type deed struct {
	term  string
	count check.WorkerCounter
}

// deeds are the scenarios' own terms: a buy is oversell's, a credit (a
// write of the once-only effect) the webhook's, a run of the job (an
// entry into its critical section) the queue's.
var deeds = map[string]deed{
	"oversell":     {"buys", check.WDoneOK},
	"retry":        {"buys", check.WDoneOK},
	"deadlock":     {"completed", check.WDoneOK},
	"webhook":      {"credits", check.WEffects},
	"queue-double": {"jobs run", check.WEntries},
}

// ScoreTerm names what Score.Did counts in scenario sc, in its own terms.
func ScoreTerm(sc string) string {
	if d, ok := deeds[sc]; ok {
		return d.term
	}
	return "succeeded"
}

// ScoreCount is the tally's per-worker count that Score.Did is in
// scenario sc.
func ScoreCount(sc string) check.WorkerCounter {
	if d, ok := deeds[sc]; ok {
		return d.count
	}
	return check.WDoneOK
}

// Scores folds a round's events into one score per attendee, in lane
// order. It is a pure function of the log, like every verdict, and every
// number in it is the tally's per-participant count: what ScoreTerm names,
// denials, outcomes and violations. A violation is the lane's whose entry,
// write or sale it was — an overlap between alice's and bob's workers is
// the one who walked in second's — so the lines add up to the header's
// count.
func Scores(h event.Header, evs []event.Event) []Score {
	gone := make([]bool, len(h.Lanes))
	for _, e := range evs {
		if e.Kind == event.KindCrash && strings.HasSuffix(e.Msg, " disconnected") && e.Worker >= 0 && int(e.Worker) < len(gone) {
			gone[e.Worker] = true
		}
	}
	t := check.TallyOf(check.Slice(evs))
	return ScoresOf(h, &t, func(lane int) bool { return gone[lane] })
}

// ScoresOf is Scores from the round's tally at some event, folded
// already (a view's shared fold), and gone, which says whether lane i had
// disconnected by then: no event is read again.
func ScoresOf(h event.Header, t *check.Tally, gone func(lane int) bool) []Score {
	did := ScoreCount(h.Scenario)
	var out []Score
	idx := map[string]int{}
	for i, lane := range h.Lanes {
		name := check.AttendeeOf(lane)
		k, ok := idx[name]
		if !ok {
			k = len(out)
			idx[name] = k
			out = append(out, Score{Name: name})
		}
		s := &out[k]
		s.Workers++
		s.Did += t.Worker(i, did)
		s.Denials += t.Worker(i, check.WDenied)
		s.Done += t.Worker(i, check.WDone)
		s.Violations += t.Worker(i, check.WViolations)
		s.Gone = s.Gone || gone(i)
	}
	return out
}
