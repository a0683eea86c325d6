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
	Violations int  // violations its lanes took part in
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
		s := who(e.Worker)
		if s != nil && did(&e) {
			s.Did++
		}
		switch e.Kind {
		case KindDenied:
			if s != nil {
				s.Denials++
			}
		case KindDone:
			if s != nil {
				s.Done++
			}
		case KindCrash:
			if s != nil && strings.HasSuffix(e.Msg, " disconnected") {
				s.Gone = true
			}
		case KindViolation:
			if s != nil {
				s.Violations++
			}
			if p := who(e.Peer); e.Has&HasPeer != 0 && p != nil && p != s {
				p.Violations++
			}
		}
	}
	return out
}
