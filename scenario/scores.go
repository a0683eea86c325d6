package scenario

import "strings"

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

// AttendeeOf is the attendee part of a lane's name (alice/2 → alice).
func AttendeeOf(lane string) string {
	name, _, _ := strings.Cut(lane, "/")
	return name
}

// deed is what a scoreboard counts of a scenario's workers.
type deed struct {
	term  string
	count func(e *Event) bool
}

func doneOK(e *Event) bool { return e.Kind == KindDone && e.OK }

// deeds are the scenarios' own terms: a buy is oversell's, a credit the
// webhook's, a run of the job the queue's.
var deeds = map[string]deed{
	"oversell": {"buys", doneOK},
	"retry":    {"buys", doneOK},
	"deadlock": {"completed", doneOK},
	"webhook": {"credits", func(e *Event) bool {
		return e.Kind == KindWrite && e.OK && (e.Res == "credit" || strings.HasPrefix(e.Res, "credit:"))
	}},
	"queue-double": {"jobs run", func(e *Event) bool {
		return e.Kind == KindWorkStart && strings.HasPrefix(e.Res, "job:")
	}},
}

// ScoreTerm names what Score.Did counts in scenario sc, in its own terms.
func ScoreTerm(sc string) string {
	if d, ok := deeds[sc]; ok {
		return d.term
	}
	return "succeeded"
}

// Scores folds a round's events into one score per attendee, in lane
// order. It is a pure function of the log, like every verdict. Did counts
// what ScoreTerm(h.Scenario) names.
func Scores(h Header, evs []Event) []Score {
	did := doneOK
	if d, ok := deeds[h.Scenario]; ok {
		did = d.count
	}
	var out []Score
	idx := map[string]int{}
	of := make([]int, len(h.Lanes))
	for i, lane := range h.Lanes {
		name := AttendeeOf(lane)
		k, ok := idx[name]
		if !ok {
			k = len(out)
			idx[name] = k
			out = append(out, Score{Name: name})
		}
		out[k].Workers++
		of[i] = k
	}
	who := func(w int32) *Score {
		if w < 0 || int(w) >= len(of) {
			return nil
		}
		return &out[of[w]]
	}
	for _, e := range evs {
		if s := who(e.Worker); s != nil && did(&e) {
			s.Did++
		}
		if e.Kind == KindCrash && strings.HasSuffix(e.Msg, " disconnected") {
			if s := who(e.Worker); s != nil {
				s.Gone = true
			}
		}
	}
	// Denials, outcomes and violations are the tally's: a violation is the
	// lane's whose entry, write or sale it was, so the lines add up to the
	// header's count.
	t := TallyOf(Slice(evs))
	for i := range of {
		s := &out[of[i]]
		s.Denials += t.Worker(i, WDenied)
		s.Done += t.Worker(i, WDone)
		s.Violations += t.Worker(i, WViolations)
	}
	return out
}
