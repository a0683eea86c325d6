package linear

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// judge judges each history by the deadline.
func (c *historyChecker) judge(ctx context.Context, deadline time.Time, draw bool) *Report {
	t := c.fold.Tally().Clone()
	rep := &Report{tally: t, overlaps: t.Get(check.NOverlaps), readUpTo: -1, fullAt: -1}
	if c.full {
		rep.fullAt = c.fullAt
		return rep
	}
	j := &judge{ctx: ctx, deadline: deadline, draw: draw}
	stop := make(chan struct{})
	defer close(stop)
	go j.watch(stop)
	for _, p := range c.done() {
		rep.parts = append(rep.parts, j.result(p))
	}
	return rep
}

// partResult is porcupine's answer for one resource under one model.
type partResult struct {
	model, res string
	ops        int
	result     porcupine.CheckResult
	info       porcupine.LinearizationInfo
	drawn      bool // info is porcupine's
	m          porcupine.Model
	// witness, when porcupine was not asked, is the placement of the
	// operations whose order the model accepted ("return", …).
	witness string
	why     string // why it was given up
}

// Report is porcupine's opinion and the checker's, side by side.
type Report struct {
	parts    []partResult
	overlaps int // the tally's
	tally    check.Tally
	timeout  time.Duration
	// readUpTo ≥ 0: the deadline passed while reading, after that many
	// events; nothing was judged.
	readUpTo int
	// fullAt ≥ 0: the histories passed what check holds at that event,
	// and were given up.
	fullAt int
}

// MutualExclusionBroken is porcupine's verdict on the critical sections:
// some section history is not linearizable against a mutex.
func (r *Report) MutualExclusionBroken() bool {
	for _, p := range r.parts {
		if p.model == "section" && p.result == porcupine.Illegal {
			return true
		}
	}
	return false
}

// GaveUp lists the resources porcupine did not decide.
func (r *Report) GaveUp() []string {
	var out []string
	for _, p := range r.parts {
		if p.result == porcupine.Unknown {
			out = append(out, p.model+" "+p.res)
		}
	}
	return out
}

func (r *Report) Print(out io.Writer) {
	if r.readUpTo >= 0 {
		fmt.Fprintf(out, "gave up (timeout %v) while reading the log, after %s events: not checked: the rest of the log, and every resource's history in it\n",
			r.timeout, thousandsOf(r.readUpTo))
		return
	}
	sectionUnknown := false
	for _, p := range r.parts {
		word := "linearizable"
		if p.witness != "" {
			word += " (each operation at its " + p.witness + ")"
		}
		switch p.result {
		case porcupine.Illegal:
			word = "NOT linearizable"
		case porcupine.Unknown:
			word = "gave up (" + p.why + "): unknown"
			sectionUnknown = sectionUnknown || p.model == "section"
		}
		fmt.Fprintf(out, "  %-8s %-22s %5d ops  %s\n", p.model, p.res, p.ops, word)
	}
	broken := "mutual exclusion held"
	if r.MutualExclusionBroken() {
		broken = "mutual exclusion broken"
	}
	agree := "agrees"
	switch {
	case r.fullAt >= 0 || sectionUnknown && !r.MutualExclusionBroken():
		broken, agree = "undecided", "not compared"
	case r.MutualExclusionBroken() != (r.overlaps > 0):
		agree = "DISAGREES"
	}
	fmt.Fprintf(out, "porcupine: %s; locklab's checker: %d overlap(s) — %s\n", broken, r.overlaps, agree)
	fmt.Fprintf(out, "locklab's tally: %s\n", tallyWords(&r.tally))
	r.printGaveUp(out)
}

// printGaveUp is the one line that names what was not checked, and why.
func (r *Report) printGaveUp(out io.Writer) {
	if r.fullAt >= 0 {
		fmt.Fprintf(out, "gave up (memory): at event %s the histories passed the %s operations check holds at once: not checked: every resource's history\n",
			thousandsOf(r.fullAt), thousandsOf(maxHeld))
		return
	}
	var names []string
	whys := map[string]bool{}
	for _, p := range r.parts {
		if p.result == porcupine.Unknown {
			names = append(names, fmt.Sprintf("%s %s (%s ops)", p.model, p.res, thousandsOf(p.ops)))
			whys[p.why] = true
		}
	}
	if len(names) == 0 {
		return
	}
	why := strings.Join(slices.Sorted(maps.Keys(whys)), "; ")
	if whys[whyTimeout] {
		why = strings.Replace(why, whyTimeout, fmt.Sprintf("timeout %v", r.timeout), 1)
	}
	fmt.Fprintf(out, "gave up (%s): not checked: %s\n", why, strings.Join(names, ", "))
}

// drawn is the most telling partition porcupine drew: the first that is
// not linearizable, else the first; nil when it drew none.
func (r *Report) drawn() *partResult {
	var p *partResult
	for i := range r.parts {
		q := &r.parts[i]
		if q.drawn && (p == nil || q.result == porcupine.Illegal && p.result != porcupine.Illegal) {
			p = q
		}
	}
	return p
}

// CanVisualize reports whether porcupine drew any of the log's histories
// (a check asked to draw, that read the whole log).
func (r *Report) CanVisualize() bool { return r.drawn() != nil }

// Visualize writes porcupine's drawing of the most telling history: the
// first that is not linearizable, else the first.
func (r *Report) Visualize(w io.Writer) error {
	p := r.drawn()
	if p == nil {
		return errors.New("the log has no operation porcupine drew")
	}
	return porcupine.Visualize(p.m, p.info, w)
}

// CheckLog builds the histories of events and checks each resource, all
// within timeout, as the header says what its locks are (its traits
// filled: scenario.WithTraits; none: Redis's locks); draw asks porcupine even where
// a witness was found, for the visualization it draws from.
func CheckLog(header event.Header, events check.Events, timeout time.Duration, draw bool) *Report {
	c := newHistoryChecker(header)
	for i := range events.Len() {
		c.add(events.At(i))
	}
	rep := c.judge(context.Background(), time.Now().Add(timeout), draw)
	rep.timeout = timeout
	return rep
}

// witness looks for a linearization without a search: every operation
// placed at one point of its interval — all at their return, all at their
// call, or all at their middle — and stepped through the model in that
// order. A point inside each interval keeps the real-time order (an
// operation that returned before another was called comes first), so an
// order the model accepts is a linearization, and the history is
// linearizable. Porcupine's search, needed to say a history is not, can
// take exponential time on many concurrent writes of one value (50
// oversell workers); a witness takes one sort. It says which placement
// worked; false if none did, and then only porcupine can tell.
func witness(m porcupine.Model, ops []porcupine.Operation) (string, bool) {
	j := &judge{}
	return j.witness(m, ops)
}

// placements are the points of an operation's interval a witness tries.
var placements = []struct {
	name  string
	point func(o *porcupine.Operation) int64
}{
	{"return", func(o *porcupine.Operation) int64 { return 2 * o.Return }},
	{"call", func(o *porcupine.Operation) int64 { return 2 * o.Call }},
	{"middle", func(o *porcupine.Operation) int64 { return o.Call + o.Return }},
}
