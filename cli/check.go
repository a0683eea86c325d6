package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/anishathalye/porcupine"
	"github.com/locklab/locklab/scenario"
	"github.com/spf13/cobra"
)

func newCheckCmd() *cobra.Command {
	var html string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "A second opinion on an event log: is its history linearizable (porcupine)?",
		Long: "check reads an event log and asks porcupine, a linearizability checker, about each resource:\n" +
			"  lock keys    against a lease (SET NX PX, compare-and-delete, renewal; a TTL runs from somewhere\n" +
			"               inside its acquire, with the clock's slack; what the strategy's lock is, from the header)\n" +
			"  stock        against a register (reads return the last write)\n" +
			"  sections     against a mutex (one worker inside at a time)\n" +
			"and prints linearizable / not per resource, beside locklab's own checker and its tally.\n" +
			"The log is read once and not kept: check's memory stays bounded (under 1 GB) whatever its\n" +
			"length, and --timeout bounds the whole check; what it could not check in time, or hold, it\n" +
			"names as given up.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("check needs one event log: locklab check FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout <= 0 {
				return usagef("--timeout must be more than 0 (got %v)", timeout)
			}
			if err := checkOutputPath("html", html); err != nil {
				return err
			}
			defer guardMemory()()
			rep, err := checkFile(cmd.Context(), args[0], timeout, html != "")
			if err != nil {
				return err
			}
			rep.print(cmd.OutOrStdout())
			if html != "" && rep.readUpTo < 0 {
				if err := rep.visualize(html); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "  html: %s\n", html)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&html, "html", "", "write porcupine's visualization of the history to FILE")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "give up after this long, reading and checking included; what was not checked is named")
	return cmd
}

// checkMemoryLimit is the soft memory limit check runs under: a guard
// under the design's bound (the GC works harder before the process would
// pass it), not the bound itself.
const checkMemoryLimit = 768 << 20

var memoryGuard struct {
	sync.Mutex
	users int
	old   int64
}

// guardMemory sets the soft memory limit while a check runs, and returns
// what puts it back once the last check running in the process is done.
func guardMemory() (release func()) {
	g := &memoryGuard
	g.Lock()
	defer g.Unlock()
	if g.users == 0 {
		g.old = debug.SetMemoryLimit(checkMemoryLimit)
	}
	g.users++
	return func() {
		g.Lock()
		defer g.Unlock()
		if g.users--; g.users == 0 {
			debug.SetMemoryLimit(g.old)
		}
	}
}

// checkFile reads and checks the event log at path within timeout.
func checkFile(ctx context.Context, path string, timeout time.Duration, draw bool) (*checkReport, error) {
	deadline := time.Now().Add(timeout)
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	fh, err := openInput(rctx, path, "event log")
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var c *historyChecker
	err = scenario.ReadEach(fh, func(h event.Header) { c = newHistoryChecker(h) }, func(e event.Event) { c.add(e) })
	switch {
	case ctx.Err() != nil:
		return nil, runtimeError{errors.New("interrupted")}
	case err != nil && rctx.Err() != nil: // the deadline passed while reading
		rep := &checkReport{timeout: timeout}
		if c != nil {
			rep.readUpTo = c.fold.Tally().Get(check.NEvents)
		}
		return rep, nil
	case err != nil:
		return nil, runtimeError{fmt.Errorf("%s: %w", path, err)}
	}
	rep := c.judge(ctx, deadline, draw)
	rep.timeout = timeout
	if ctx.Err() != nil {
		return nil, runtimeError{errors.New("interrupted")}
	}
	return rep, nil
}

// judge judges each history by the deadline.
func (c *historyChecker) judge(ctx context.Context, deadline time.Time, draw bool) *checkReport {
	t := c.fold.Tally().Clone()
	rep := &checkReport{tally: t, overlaps: t.Get(check.NOverlaps), readUpTo: -1, fullAt: -1}
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

// checkReport is porcupine's opinion and the checker's, side by side.
type checkReport struct {
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
func (r *checkReport) MutualExclusionBroken() bool {
	for _, p := range r.parts {
		if p.model == "section" && p.result == porcupine.Illegal {
			return true
		}
	}
	return false
}

// gaveUp lists the resources porcupine did not decide.
func (r *checkReport) gaveUp() []string {
	var out []string
	for _, p := range r.parts {
		if p.result == porcupine.Unknown {
			out = append(out, p.model+" "+p.res)
		}
	}
	return out
}

func (r *checkReport) print(out io.Writer) {
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
func (r *checkReport) printGaveUp(out io.Writer) {
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

// visualize writes the most telling partition porcupine drew: the first
// that is not linearizable, else the first.
func (r *checkReport) visualize(path string) error {
	var p *partResult
	for i := range r.parts {
		q := &r.parts[i]
		if q.drawn && (p == nil || q.result == porcupine.Illegal && p.result != porcupine.Illegal) {
			p = q
		}
	}
	if p == nil {
		return runtimeError{fmt.Errorf("cannot write %s: the log has no operation porcupine drew", path)}
	}
	return writeOutput("html", path, "visualization", func(w io.Writer) error { return porcupine.Visualize(p.m, p.info, w) })
}

// checkHistory builds the histories of events and checks each resource,
// all within timeout, their locks taken for Redis's.
func checkHistory(events check.Events, timeout time.Duration) *checkReport {
	return checkLog(event.Header{}, events, timeout, false)
}

// checkLog is checkHistory of a log whose header says what its locks are;
// draw asks porcupine even where a witness was found, for the
// visualization it draws from.
func checkLog(header event.Header, events check.Events, timeout time.Duration, draw bool) *checkReport {
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
