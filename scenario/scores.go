package scenario

import "strings"

// Score is one attendee's line on a shared race's scoreboard: lanes named
// NAME/N belong to attendee NAME.
type Score struct {
	Name       string
	Workers    int
	Buys       int  // workers that bought
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

// Scores folds a round's events into one score per attendee, in lane
// order. It is a pure function of the log, like every verdict.
func Scores(h Header, evs []Event) []Score {
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
		switch e.Kind {
		case KindDenied:
			if s != nil {
				s.Denials++
			}
		case KindDone:
			if s != nil {
				s.Done++
				if e.OK {
					s.Buys++
				}
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
