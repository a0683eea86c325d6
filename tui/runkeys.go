package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/untrusted"
)

// runCtl is the run on screen, live or replayed, in any view: presenter
// mode's switch, saving its log and scrolling its lanes.
type runCtl struct{ v *runView }

// runKeys are the run on screen's: saving its log, scrolling its lanes.
type runKeys struct {
	Save, ScrollUp, ScrollDown key.Binding
}

func defaultRunKeys() runKeys {
	return runKeys{
		Save:       bind([]string{"s"}, "s", "save log"),
		ScrollUp:   bind([]string{"up", "k"}, "↑", "scroll"),
		ScrollDown: bind([]string{"down", "j"}, "↓", "scroll"),
	}
}

func (c runCtl) keys() []binding {
	v, k := c.v, c.v.keys
	return []binding{
		{v.pr.keys.Toggle, footPresent, act(v.pr.toggle)},
		{k.Save, footNone, act(v.saveLog)},
		{k.ScrollUp, footNone, act(func() { v.scroll = max(v.scroll-1, 0) })},
		{k.ScrollDown, footNone, act(func() { v.scroll++ })},
	}
}

// liveCtl is a run this program started: it can be broken (the fault
// menu), run again, scheduled by hand, branched, or left for the
// parameters.
type liveCtl struct{ a *App }

// liveKeys are a live run's.
type liveKeys struct {
	Faults, Rerun, NewSeed, Manual, Branch, Switch, Undo, Back key.Binding
}

func defaultLiveKeys() liveKeys {
	return liveKeys{
		Faults:  bind([]string{"f"}, "f", "faults"),
		Rerun:   bind([]string{"r"}, "r", "rerun"),
		NewSeed: bind([]string{"n"}, "n", "new seed"),
		Manual:  bind([]string{"m"}, "m", "you schedule"),
		Branch:  bind([]string{"F"}, "F", "branch here"),
		Switch:  bind([]string{"tab"}, "tab", "original/branch"),
		Undo:    bind([]string{"u"}, "u", "undo"),
		Back:    bind([]string{"esc"}, "esc", "parameters"),
	}
}

func (c liveCtl) keys() []binding {
	a, v := c.a, c.a.run
	k := defaultLiveKeys()
	live, sim := v.s.live(), v.s.live() && v.s.run.Simulated()
	k.Faults.SetEnabled(live && !v.recorded() && v.s.man == nil)
	k.Rerun.SetEnabled(live)
	k.NewSeed.SetEnabled(live)
	k.Manual.SetEnabled(sim && !v.recorded() && v.s.man == nil)
	k.Branch.SetEnabled(sim)
	k.Switch.SetEnabled(a.orig != nil)
	k.Undo.SetEnabled(live && v.s.man != nil)
	return []binding{
		{k.Faults, footFaults, act(v.faults.show)},
		{k.Rerun, footRerun, func(tea.KeyMsg) tea.Cmd { return a.rerun() }},
		{k.NewSeed, footNone, func(tea.KeyMsg) tea.Cmd { return a.rerunNewSeed() }},
		{k.Manual, footManual, func(tea.KeyMsg) tea.Cmd { return a.toManual() }},
		{k.Branch, footBranch, func(tea.KeyMsg) tea.Cmd { return a.branchOrSay() }},
		{k.Switch, footSwitch, act(a.switchBranch)},
		{k.Undo, footUndo, func(tea.KeyMsg) tea.Cmd { return a.undo() }},
		{k.Back, footBack, act(a.backToForm)},
	}
}

// replayCtl is a log read from a file: esc leaves it.
type replayCtl struct{ a *App }

func (c replayCtl) keys() []binding {
	quit := defaultLiveKeys().Back
	quit.SetHelp("esc", "quit")
	return []binding{{quit, footBack, func(tea.KeyMsg) tea.Cmd { return c.a.quit() }}}
}

// rerun runs the same run again, at the pace on screen.
func (a *App) rerun() tea.Cmd {
	spec := a.run.s.spec
	if spec.Manual {
		spec.Steps, spec.From = nil, 0 // the scheduler mode starts over
	}
	spec.Speed = a.run.speed // the pace on screen, not the one it opened at
	return a.start(spec, nil)
}

// rerunNewSeed runs it again with a new seed, which the form keeps.
func (a *App) rerunNewSeed() tea.Cmd {
	spec := a.run.s.spec
	spec.Seed, spec.Speed = newSeed(), a.run.speed
	a.form.setSeed(spec.Seed)
	return a.start(spec, nil)
}

// backToForm stops the run and goes back to its parameters.
func (a *App) backToForm() {
	a.stopRun()
	a.run = nil
	a.screen = screenForm
}

// branchOrSay branches from the playhead, or says why it cannot yet.
func (a *App) branchOrSay() tea.Cmd {
	switch v := a.run; {
	case v.cursor < 0:
		v.status = "no event yet to branch from"
	case !v.canBranch():
		v.status = "F branches from a paused playhead: space pauses first"
	default:
		return a.branchHere()
	}
	return nil
}

// switchBranch shows the other side of a branch.
func (a *App) switchBranch() {
	if a.orig == nil {
		return
	}
	a.run, a.orig = a.orig, a.run
	a.run.cache = renderCache{} // the other side's verdict may have come meanwhile
}

// undo plays the run again with every hand-chosen step but the person's
// last, and asks again where that one was chosen: the same seed and the
// same choices give the same run.
func (a *App) undo() tea.Cmd {
	s := a.run.s
	hand := s.run.Hand()
	last := -1
	for i, st := range hand {
		if s.man.laneOf(st.Actor) != "" || st.Actor == scenario.WaitStep {
			last = i
		}
	}
	if last < 0 {
		a.run.status = "nothing to undo: no step chosen yet"
		return nil
	}
	spec := s.spec
	spec.Steps, spec.From = hand[:last], hand[last].N
	return a.start(spec, nil)
}

// toManual plays the simulated run again up to where it is now and hands
// the steps from there on to the person.
func (a *App) toManual() tea.Cmd {
	s := a.run.s
	spec := s.spec
	spec.Manual, spec.From = true, s.run.Steps()+1
	spec.Faults, spec.Steps = s.run.Faults(), s.run.Hand()
	return a.start(spec, nil)
}

// saveLog writes the run's log to the working directory, and beside a
// finished simulated run's its schedule.
func (v *runView) saveLog() {
	sp := v.s.spec
	path := fmt.Sprintf("locklab-%s-%s-%d.jsonl", sp.Scenario, sp.Strategy, sp.Seed)
	if v.branch != nil {
		path = fmt.Sprintf("locklab-%s-%s-%d-branch-%d.jsonl", sp.Scenario, sp.Strategy, sp.Seed, v.branch.step)
	}
	if err := v.s.save(path); err != nil {
		v.status = "could not save: " + untrusted.Line(err.Error())
		return
	}
	v.status = fmt.Sprintf("saved %d events to %s", v.s.log.Len(), path)
	if v.s.run == nil || !v.s.run.Simulated() || !v.recorded() {
		return
	}
	// A finished simulated run's schedule goes beside it: with the steps
	// chosen by hand, run --schedule plays the same log again.
	spath := strings.TrimSuffix(path, ".jsonl") + ".schedule"
	if err := v.s.saveSchedule(spath); err != nil {
		v.status += "; could not save the schedule: " + untrusted.Line(err.Error())
		return
	}
	v.status += " and its schedule to " + spath
}
