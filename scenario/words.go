package scenario

import (
	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// A scenario's verdict is the one its events show (the check's), said in
// the scenario's own words: its notes, and what a duplicate or the verdict
// means there.

// words are what h's scenario adds to the verdict of its run.
func words(h event.Header) check.Words {
	w := check.Words{Lock: isLock(h.Strategy), Note: strategyNote(h.Strategy),
		Duplicate: duplicateDetail[h.Scenario], Detail: verdictDetail[h.Scenario]}
	if sc, err := Lookup(h.Scenario); err == nil {
		if sc.notes != nil {
			w.Notes = sc.notes(h)
		}
		if sc.lockOf != nil && !w.Lock {
			// A way of the scenario's that takes a lock (extend-late's).
			l := sc.lockOf(h.Strategy)
			w.Lock = l != "none" && isLock(l)
		}
	}
	return w
}

// Summarize folds a run's events into its summary. The header gives the
// scenario, strategy and parameters.
func Summarize(h event.Header, events check.Events) *check.Summary {
	return check.SummarizeWith(WithTraits(h), events, words(h))
}

// NewSummarizer returns a summarizer for a run with header h.
func NewSummarizer(h event.Header) *check.Summarizer {
	return check.NewSummarizerWith(WithTraits(h), words(h))
}

func strategyNote(name string) string {
	for _, st := range Strategies() {
		if st.Name == name {
			return " — " + st.Short
		}
	}
	return ""
}
