package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// faultKeys inject faults into a live run. They are active while the fault
// menu (f) is open, and take precedence over the run view's keys then.
type faultKeys struct {
	Crash, Pause, NextWorker, PrevWorker               key.Binding
	Stop, Restart, NodePause, Jump, Failover, NextNode key.Binding
	Close                                              key.Binding
}

func defaultFaultKeys() faultKeys {
	return faultKeys{
		Crash:      bind([]string{"c"}, "c", "crash"),
		Pause:      bind([]string{"p"}, "p", "pause"),
		NextWorker: bind([]string{"tab"}, "tab", "next worker"),
		PrevWorker: bind([]string{"shift+tab"}, "⇧tab", "previous worker"),
		Stop:       bind([]string{"s"}, "s", "stop/start node"),
		Restart:    bind([]string{"e"}, "e", "restart node empty"),
		NodePause:  bind([]string{"z"}, "z", "pause/resume node"),
		Jump:       bind([]string{"j"}, "j", "jump node clock"),
		Failover:   bind([]string{"o"}, "o", "fail over node"),
		NextNode:   bind([]string{"n"}, "n", "next node"),
		Close:      bind([]string{"esc", "f"}, "esc", "close faults"),
	}
}

// faultMenu is the state of the fault menu.
type faultMenu struct {
	open   bool
	keys   faultKeys
	worker int32
	node   int
}

// openFaults opens the fault menu aimed at the worker that holds a lock
// now, or the first one still at work.
func (v *runView) openFaults() {
	if v.s.replay != "" || v.s.run == nil {
		v.status = "a replay cannot change what happened: faults work in live runs"
		return
	}
	if v.s.finished() {
		v.status = "the run has ended: nothing left to break (r runs it again)"
		return
	}
	v.faults.open = true
	v.faults.worker = v.busiestWorker()
	v.faults.node = min(v.faults.node, max(v.s.header.Params.Nodes-1, 0))
	v.status = ""
}

// busiestWorker is a lock holder at the newest event, else the first
// worker that has not finished.
func (v *runView) busiestWorker() int32 {
	k := v.tl.N - 1
	for _, l := range v.tl.Locks {
		if spans, _ := v.tl.LockAt(l, k); len(spans) > 0 && spans[len(spans)-1].Holder >= 0 {
			return spans[len(spans)-1].Holder
		}
	}
	for i := range v.tl.Workers {
		if st := v.tl.StateAt(i, k); st != themes.DoneOK && st != themes.DoneFail && st != themes.Paused {
			return int32(i)
		}
	}
	return 0
}

// handleFaultKey handles a key while the fault menu is open; false lets the
// run view have it.
func (v *runView) handleFaultKey(msg tea.KeyMsg) bool {
	k, f := v.faults.keys, &v.faults
	workers, nodes := int32(len(v.tl.Workers)), v.s.header.Params.Nodes
	var inject *scenario.Fault
	for _, m := range []struct {
		b    key.Binding
		kind scenario.FaultKind
	}{
		{k.Crash, scenario.FaultCrash}, {k.Pause, scenario.FaultPause}, {k.Stop, scenario.FaultNodeStop},
		{k.Restart, scenario.FaultNodeRestart}, {k.NodePause, scenario.FaultNodePause},
		{k.Jump, scenario.FaultClockJump}, {k.Failover, scenario.FaultFailover},
	} {
		if key.Matches(msg, m.b) {
			inject = &scenario.Fault{Kind: m.kind, Worker: f.worker, Node: f.node}
		}
	}
	switch {
	case inject != nil:
	case key.Matches(msg, k.Close):
		f.open = false
	case key.Matches(msg, k.NextWorker):
		f.worker = (f.worker + 1) % max(workers, 1)
	case key.Matches(msg, k.PrevWorker):
		f.worker = (f.worker + workers - 1) % max(workers, 1)
	case key.Matches(msg, k.NextNode):
		f.node = (f.node + 1) % max(nodes, 1)
	default:
		return false
	}
	if inject != nil {
		what, err := v.s.run.Inject(*inject)
		if err != nil {
			v.status = "fault not injected: " + err.Error()
		} else {
			v.status = what
		}
	}
	return true
}

// faultHelp is the footer while the fault menu is open: every binding says
// what it would hit.
func (v *runView) faultHelp() helpMap {
	k, f := v.faults.keys, v.faults
	w, n := scenario.WorkerName(f.worker), fmt.Sprintf("node %d", f.node)
	with := func(b key.Binding, desc string) key.Binding {
		b.SetHelp(b.Help().Key, desc)
		return b
	}
	short := []key.Binding{
		with(k.Crash, "crash "+w), with(k.Pause, "pause "+w), k.NextWorker,
		with(k.Stop, "stop/start "+n), with(k.NodePause, "pause "+n), with(k.Failover, "fail over "+n),
		with(k.Jump, "jump "+n+"'s clock"), with(k.Restart, "restart "+n+" empty"), k.NextNode, k.Close,
	}
	return helpMap{short: short, full: [][]key.Binding{short[:3], short[3:8], short[8:]}}
}
