package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

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
			"and prints linearizable / not per resource, beside locklab's own checker.",
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
			fh, err := openInput(cmd.Context(), args[0], "event log")
			if err != nil {
				return err
			}
			defer fh.Close()
			rec, err := scenario.ReadRecording(fh)
			if cmd.Context().Err() != nil {
				return runtimeError{errors.New("interrupted")}
			}
			if err != nil {
				return runtimeError{fmt.Errorf("%s: %w", args[0], err)}
			}
			rep := checkLog(rec.Header, scenario.Slice(rec.Events), timeout, html != "")
			rep.print(cmd.OutOrStdout())
			if html != "" {
				if err := rep.visualize(html); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "  html: %s\n", html)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&html, "html", "", "write porcupine's visualization of the history to FILE")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "give up on a resource after this long")
	return cmd
}

// partResult is porcupine's answer for one resource under one model.
type partResult struct {
	model, res string
	ops        int
	result     porcupine.CheckResult
	info       porcupine.LinearizationInfo
	m          porcupine.Model
	// witness, when porcupine was not asked, is the placement of the
	// operations whose order the model accepted ("return", …).
	witness string
}

// checkReport is porcupine's opinion and the checker's, side by side.
type checkReport struct {
	parts    []partResult
	overlaps int // the checker's
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

// gaveUp lists the resources porcupine timed out on.
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
	for _, p := range r.parts {
		word := "linearizable"
		if p.witness != "" {
			word += " (each operation at its " + p.witness + ")"
		}
		switch p.result {
		case porcupine.Illegal:
			word = "NOT linearizable"
		case porcupine.Unknown:
			word = "gave up (timeout): unknown"
		}
		fmt.Fprintf(out, "  %-8s %-22s %5d ops  %s\n", p.model, p.res, p.ops, word)
	}
	broken := "mutual exclusion held"
	if r.MutualExclusionBroken() {
		broken = "mutual exclusion broken"
	}
	agree := "agrees"
	if r.MutualExclusionBroken() != (r.overlaps > 0) {
		agree = "DISAGREES"
	}
	fmt.Fprintf(out, "porcupine: %s; locklab's checker: %d overlap(s) — %s\n", broken, r.overlaps, agree)
}

// visualize writes the most telling partition: the first that is not
// linearizable, else the first.
func (r *checkReport) visualize(path string) error {
	if len(r.parts) == 0 {
		return runtimeError{fmt.Errorf("cannot write %s: the log has no operation to draw", path)}
	}
	p := r.parts[0]
	for _, q := range r.parts {
		if q.result == porcupine.Illegal {
			p = q
			break
		}
	}
	return writeOutput("html", path, "visualization", func(w io.Writer) error { return porcupine.Visualize(p.m, p.info, w) })
}

// checkHistory builds the histories of events and checks each resource,
// each bounded by timeout, its locks taken for Redis's.
func checkHistory(events scenario.Events, timeout time.Duration) *checkReport {
	return checkLog(scenario.Header{}, events, timeout, false)
}

// checkLog is checkHistory of a log whose header says what its locks are;
// draw asks porcupine even where a witness was found, for the
// visualization it draws from.
func checkLog(header scenario.Header, events scenario.Events, timeout time.Duration, draw bool) *checkReport {
	c, _ := scenario.Check(events)
	rep := &checkReport{overlaps: c.Overlaps}
	h := buildHistories(header, events)
	for _, g := range []struct {
		model string
		m     porcupine.Model
		by    map[string][]porcupine.Operation
	}{{"lease", leaseModel, h.lease}, {"register", registerModel, h.register}, {"section", sectionModel, h.section}} {
		keys := make([]string, 0, len(g.by))
		for k := range g.by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ops := g.by[k]
			if at, ok := witness(g.m, ops); ok && !draw {
				rep.parts = append(rep.parts, partResult{model: g.model, res: k, ops: len(ops), result: porcupine.Ok, m: g.m, witness: at})
				continue
			}
			res, info := porcupine.CheckOperationsVerbose(g.m, ops, timeout)
			rep.parts = append(rep.parts, partResult{model: g.model, res: k, ops: len(ops), result: res, info: info, m: g.m})
		}
	}
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
	for _, at := range []struct {
		name  string
		point func(o *porcupine.Operation) int64
	}{
		{"return", func(o *porcupine.Operation) int64 { return 2 * o.Return }},
		{"call", func(o *porcupine.Operation) int64 { return 2 * o.Call }},
		{"middle", func(o *porcupine.Operation) int64 { return o.Call + o.Return }},
	} {
		order := make([]*porcupine.Operation, len(ops))
		for i := range ops {
			order[i] = &ops[i]
		}
		sort.SliceStable(order, func(i, j int) bool { return at.point(order[i]) < at.point(order[j]) })
		state, ok := m.Init(), true
		for _, o := range order {
			if ok, state = m.Step(state, o.Input, o.Output); !ok {
				break
			}
		}
		if ok {
			return at.name, true
		}
	}
	return "", false
}

// histories are porcupine operations by model and resource.
type histories struct {
	lease, register, section map[string][]porcupine.Operation
}

// buildHistories turns a log into operations with their call and return
// times (µs; a critical section's entries and exits at their place in the
// log, where the checker sees them).
func buildHistories(header scenario.Header, events scenario.Events) histories {
	h := histories{register: map[string][]porcupine.Operation{}, section: map[string][]porcupine.Operation{}}
	lb := newLeaseBuilder(header, events)
	inside := map[int32][]string{}
	for i := range events.Len() {
		e := events.At(i)
		call, ret := lb.span(&e) // an invoke the log does not stamp: after the worker's previous event
		client := int(max(e.Worker, -1) + 1)
		lb.event(e)
		switch e.Kind {
		case scenario.KindInit, scenario.KindRead, scenario.KindWrite:
			if e.Has&scenario.HasStock == 0 || (e.Kind == scenario.KindWrite && e.Has&scenario.HasOK != 0 && !e.OK) {
				break
			}
			op := map[scenario.Kind]string{scenario.KindInit: "write", scenario.KindRead: "read", scenario.KindWrite: "write"}[e.Kind]
			h.register[e.Res] = append(h.register[e.Res], porcupine.Operation{ClientId: client,
				Input: regIn{op, e.Stock}, Call: call, Output: e.Stock, Return: ret})
		case scenario.KindWorkStart, scenario.KindWorkEnd, scenario.KindCrash:
			at := int64(i) * 2 // the log's order: where the checker sees them
			add := func(res string, in sectionIn) {
				h.section[res] = append(h.section[res], porcupine.Operation{ClientId: client, Input: in, Call: at, Output: true, Return: at + 1})
			}
			switch e.Kind {
			case scenario.KindWorkStart:
				add(e.Res, sectionIn{"enter", e.Worker})
				inside[e.Worker] = append(inside[e.Worker], e.Res)
			case scenario.KindWorkEnd:
				add(e.Res, sectionIn{"exit", e.Worker})
				inside[e.Worker] = slices.DeleteFunc(inside[e.Worker], func(r string) bool { return r == e.Res })
			default: // a crashed worker is inside nothing any more
				for _, r := range inside[e.Worker] {
					add(r, sectionIn{"exit", e.Worker})
				}
				delete(inside, e.Worker)
			}
		}
	}
	h.lease = lb.done()
	return h
}
