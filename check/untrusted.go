package check

import (
	"unsafe"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/untrusted"
)

// Text read from an event log, or answered by a server, is another's: its
// control characters and escape sequences are removed where it comes in
// (the log's reader, and the log's string table for what runs emit), so
// no view, printout or recording passes them to a terminal.

// lineCleaner cleans the text fields of the events read from one file.
// Their strings repeat (its decoder hands the same string back for the
// same text): the string last cleaned in each slot is kept with its
// result, so one seen again is not scanned again.
type lineCleaner struct{ in, out [16]string }

func (c *lineCleaner) event(e *event.Event) {
	e.Res, e.Token, e.Code, e.Msg = c.line(e.Res), c.line(e.Token), c.line(e.Code), c.line(e.Msg)
}

func (c *lineCleaner) line(s string) string {
	if s == "" {
		return s
	}
	i := (len(s) ^ int(s[0])) & (len(c.in) - 1)
	if len(c.in[i]) == len(s) && unsafe.StringData(c.in[i]) == unsafe.StringData(s) {
		return c.out[i] // the very same bytes: the same result
	}
	out := untrusted.Line(s)
	c.in[i], c.out[i] = s, out
	return out
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
