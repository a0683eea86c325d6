package check

import (
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/untrusted"
)

// Text read from an event log, or answered by a server, is another's: its
// control characters and escape sequences are removed where it comes in
// (the log's reader, and the log's string table for what runs emit), so
// no view, printout or recording passes them to a terminal.

// cleanEvent cleans the text fields of an event read from a file.
func cleanEvent(e *event.Event) {
	e.Res, e.Token, e.Code, e.Msg = untrusted.Line(e.Res), untrusted.Line(e.Token), untrusted.Line(e.Code), untrusted.Line(e.Msg)
}

// cleanHeader cleans the text fields of a log's header.
func cleanHeader(h *event.Header) {
	for _, s := range []*string{&h.Format, &h.Scenario, &h.Strategy, &h.Store, &h.Time, &h.Tool,
		&h.Params.Retry, &h.Params.Order, &h.Params.Part, &h.Params.Clock} {
		*s = untrusted.Line(*s)
	}
	if len(h.Lanes) > 0 {
		lanes := make([]string, len(h.Lanes))
		for i, l := range h.Lanes {
			lanes[i] = untrusted.Line(l)
		}
		h.Lanes = lanes
	}
}

// cleanSummary cleans the text fields of a summary line read from a file.
func cleanSummary(s *Summary) {
	for _, p := range []*string{&s.Scenario, &s.Strategy, &s.ServerError, &s.Machine, &s.UnansweredError, &s.GaveUpKinds, &s.GaveUpMsg,
		&s.Mismatch, &s.Verdict, &s.Detail} {
		*p = untrusted.Line(*p)
	}
	for i := range s.Notes {
		s.Notes[i] = [2]string{untrusted.Line(s.Notes[i][0]), untrusted.Line(s.Notes[i][1])}
	}
}
