// Package linear is the second opinion of `locklab check`: it builds each
// resource's history from an event log — lock keys as leases, the stock as
// a register, critical sections as a mutex — and asks porcupine, a
// linearizability checker, whether the store could have produced it,
// beside locklab's own checker and its tally. It reads a log once and holds
// a bounded part of it, whatever its length.
package linear

import (
	"context"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locklab/locklab/event"
)

// Checker takes a log's events one at a time.
type Checker struct{ c *historyChecker }

// New returns the checker of a log with header h, whose traits say what
// its locks are (scenario.WithTraits fills them for an older log).
func New(h event.Header) *Checker { return &Checker{newHistoryChecker(h)} }

// Add takes the log's next event.
func (c *Checker) Add(e event.Event) { c.c.add(e) }

// Read is how many events it has taken.
func (c *Checker) Read() int { return c.c.events }

// Judge judges each history by the deadline, or until ctx ends; timeout is
// what the report says the check was given.
func (c *Checker) Judge(ctx context.Context, deadline time.Time, timeout time.Duration, draw bool) *Report {
	rep := c.c.judge(ctx, deadline, draw)
	rep.timeout = timeout
	return rep
}

// Unread is the report of a check whose deadline passed while the log was
// read, after n events: nothing was judged.
func Unread(timeout time.Duration, n int) *Report {
	return &Report{timeout: timeout, readUpTo: n}
}

// Complete reports whether the whole log was read and judged.
func (r *Report) Complete() bool { return r.readUpTo < 0 }

// Part is porcupine's answer on one resource under one model.
type Part struct {
	Model, Res string
	Result     porcupine.CheckResult
}

// Parts are the answers, in the order the report lists them.
func (r *Report) Parts() []Part {
	out := make([]Part, len(r.parts))
	for i, p := range r.parts {
		out[i] = Part{p.model, p.res, p.result}
	}
	return out
}

// Overlaps is the tally's count of overlapping critical sections: what
// locklab's own checker says beside porcupine.
func (r *Report) Overlaps() int { return r.overlaps }
