package tui

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/tui/draw"

	tea "github.com/charmbracelet/bubbletea"
)

// A branch is the same simulated run played again to a moment — the step
// of the event at the playhead — and from there scheduled by hand: the
// seed, the faults and the hand-chosen steps before that step are the
// original's, so up to it the branch is the original, byte for byte.
// Tab shows the other one; the divergence is marked on both time axes.

// branchInfo is where a branch leaves its original.
type branchInfo struct {
	step  uint64        // the last step the two share
	t     time.Duration // the simulated time of that step's event
	event int           // the event at the playhead when F was pressed
}

// canBranch reports whether F can branch from the playhead: a simulated
// run of this session (live and paused, or over), not a file's log.
func (v *runView) canBranch() bool {
	r := v.s.run
	if r == nil || !r.Simulated() || v.cursor < 0 {
		return false
	}
	return v.recorded() || v.paused
}

// branchHere starts a branch from the event at the playhead.
func (a *App) branchHere() tea.Cmd {
	v := a.run
	r := v.s.run
	step := r.StepAt(v.cursor)
	spec := v.s.spec
	spec.Manual, spec.From, spec.Level = true, step+1, v.s.spec.Level
	spec.Steps = nil
	for _, st := range r.Hand() {
		if st.N <= step {
			spec.Steps = append(spec.Steps, st)
		}
	}
	spec.Faults = nil
	for _, f := range r.Faults() {
		if f.Pressed == nil || f.Pressed.Steps <= step {
			spec.Faults = append(spec.Faults, f)
		}
	}
	a.branching = &branchInfo{step: step, t: v.eventT(v.cursor), event: v.cursor}
	return a.start(spec, nil)
}

// branchLine says, on either side of a branch, where it left and how the
// other came out.
func (a *App) branchLine() string {
	v, o := a.run, a.orig
	if o == nil {
		return ""
	}
	b := v.branch
	side, other := "branch", "original"
	if b == nil {
		b, side, other = v.fork, "original", "branch"
	}
	if b == nil {
		return ""
	}
	return fmt.Sprintf("⑂ %s from step %d (t %s) · this: %s · %s: %s · tab", side, b.step, draw.Dur(b.t), verdictOf(v), other, verdictOf(o))
}

// verdictOf is a run's verdict so far: the checker's at its end, else
// what its tally says now.
func verdictOf(v *runView) string {
	if v.s.summary != nil {
		return v.s.summary.Verdict
	}
	if t := v.tl.TallyAt(v.tl.N - 1); t.Get(check.NViolations) > 0 {
		return fmt.Sprintf("%d violation(s) so far", t.Get(check.NViolations))
	}
	return "no violation yet"
}
