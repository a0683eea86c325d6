package tui

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/tui/draw"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/untrusted"
)

// faultKeys inject faults into a live run. The fault menu (f) is modal:
// while it is open every key but the global ones (q, ?, t) is its own.
type faultKeys struct {
	Crash, Pause, NextWorker, PrevWorker               key.Binding
	Stop, Restart, NodePause, Jump, Failover, NextNode key.Binding
	Close                                              key.Binding
	net                                                netKeys
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
		net:        defaultNetKeys(),
	}
}

// faultMenu is the state of the fault menu.
type faultMenu struct {
	v      *runView // the run view it breaks
	open   bool
	keys   faultKeys
	worker int32
	node   int
	resume bool      // opening the menu paused the world: closing it lets it go on
	dir    store.Dir // the way the next network fault acts; 0: both
}

// show opens the fault menu aimed at the worker that holds a lock
// now, or the first one still at work. On the embedded store the world
// stands still while the menu is open.
func (m *faultMenu) show() {
	v := m.v
	if v.s.replay != "" || v.s.run == nil {
		v.status = "a replay cannot change what happened: faults work in live runs"
		return
	}
	if v.recorded() {
		v.status = "the run has ended: nothing left to break (r runs it again)"
		return
	}
	m.open = true
	m.worker = m.busiestWorker()
	m.node = min(m.node, max(v.s.header.Params.Nodes-1, 0))
	m.resume = false
	if v.s.embedded() && !v.paused {
		if v.follow {
			v.playT = v.now()
		}
		v.paused, m.resume = true, true
		v.pauseWorld(true)
	}
	v.status = ""
}

// close closes the menu and lets the world go on if the menu
// stopped it.
func (m *faultMenu) close() {
	v := m.v
	m.open = false
	if strings.HasSuffix(v.status, "esc closes the fault menu") || strings.HasSuffix(v.status, "esc closes the menu") {
		v.status = "" // the menu's own advice goes with it
	}
	if m.resume && !v.recorded() {
		v.paused = false
		v.pauseWorld(false)
	}
	m.resume = false
}

// busiestWorker is a lock holder at the newest event, else the first
// worker that has not finished.
func (m *faultMenu) busiestWorker() int32 {
	v := m.v
	k := v.tl.N - 1
	for _, l := range v.tl.Locks {
		if spans, _ := v.tl.LockAt(l, k); spans.Len() > 0 && spans.At(spans.Len()-1).Holder >= 0 {
			return spans.At(spans.Len() - 1).Holder
		}
	}
	for i := range v.tl.Workers {
		if st := v.tl.StateAt(i, k); st != themes.DoneOK && st != themes.DoneFail && st != themes.Paused {
			return int32(i)
		}
	}
	return 0
}

// faultCtl is the fault menu. It is modal: while it is open every key but
// the global ones (q, ?, t) is its own, and one it does not know is
// explained, never passed on.
type faultCtl struct{ v *runView }

func (c faultCtl) open() bool { return c.v.faults.open }

func (c faultCtl) keys() []binding {
	v := c.v
	if !v.faults.open {
		return nil
	}
	k, f := v.faults.keys, &v.faults
	workers, nodes := int32(len(v.tl.Workers)), v.s.header.Params.Nodes
	aim := func(move func()) func(tea.KeyMsg) tea.Cmd {
		return act(func() { move(); v.status = "" })
	}
	inject := func(kind scenario.FaultKind) func(tea.KeyMsg) tea.Cmd {
		return act(func() { v.faults.inject(scenario.Fault{Kind: kind, Worker: f.worker, Node: f.node}) })
	}
	bs := []binding{
		{k.Crash, footNone, inject(scenario.FaultCrash)},
		{k.Pause, footNone, inject(scenario.FaultPause)},
		{k.NextWorker, footNone, aim(func() { f.worker = (f.worker + 1) % max(workers, 1) })},
		{k.PrevWorker, footNone, aim(func() { f.worker = (f.worker + workers - 1) % max(workers, 1) })},
		{k.Stop, footNone, inject(scenario.FaultNodeStop)},
		{k.NodePause, footNone, inject(scenario.FaultNodePause)},
		{k.Restart, footNone, inject(scenario.FaultNodeRestart)},
		{k.Jump, footNone, inject(scenario.FaultClockJump)},
		{k.Failover, footNone, inject(scenario.FaultFailover)},
		{k.NextNode, footNone, aim(func() { f.node = (f.node + 1) % max(nodes, 1) })},
		{k.Close, footClose, act(v.faults.close)},
	}
	return append(bs, v.faults.netBindings()...)
}

// rest explains a key the menu does not know.
func (c faultCtl) rest(msg tea.KeyMsg) tea.Cmd {
	c.v.status = fmt.Sprintf("%q is not a fault key — esc closes the fault menu", msg.String())
	return nil
}

// inject injects f into the live run and says what it did.
func (m *faultMenu) inject(f scenario.Fault) {
	v := m.v
	if v.recorded() {
		v.status = "the run has ended: nothing left to break — esc closes the menu"
		return
	}
	what, err := v.s.run.Inject(f)
	m.say(what, err)
}

// say says what a fault key did.
func (m *faultMenu) say(what string, err error) {
	v := m.v
	switch {
	case err != nil:
		v.status = "fault not injected: " + untrusted.Line(err.Error())
	case m.resume:
		v.status = what + " — esc lets the run go on"
	default:
		v.status = what
	}
}

// panel is the open fault menu: what each key would hit and what it
// would do to it, w cells wide.
func (m *faultMenu) panel(th *themes.Theme, w int) []string {
	v := m.v
	f, p := *m, v.s.header.Params
	wn, n := check.WorkerName(f.worker), fmt.Sprintf("node %d", f.node)
	stop, pause := "stop "+n, "pause "+n
	stopWhat, pauseWhat := "it refuses every connection until s starts it", "it holds every command until z resumes it"
	if st := v.s.store; st != nil && f.node < len(st.Nodes()) {
		if nd := st.Nodes()[f.node]; nd.Down() {
			stop, stopWhat = "start "+n, "it comes back with its data"
		} else if nd.Paused() {
			pause, pauseWhat = "resume "+n, "it answers the commands it held"
		}
	}
	rows := [][3]string{
		{"c", "crash " + wn, "dies now; its lock stays until the TTL lapses"},
		{"p", "pause " + wn, fmt.Sprintf("freezes %v (1.5 × TTL), then goes on unaware", p.TTL.D()*3/2)},
		{"tab", "next worker", m.workerNote(f.worker)},
		{"s", stop, stopWhat},
		{"z", pause, pauseWhat},
		{"e", "restart " + n + " empty", "it comes back at once without its data"},
		{"j", "jump " + n + "'s clock", fmt.Sprintf("its TTLs lapse as if %v had passed", p.TTL.D())},
		{"o", "fail over " + n, fmt.Sprintf("its replica (%v behind) takes over", replicaLag)},
		{"n", "next node", m.nodeNote(f.node)},
	}
	rows = append(rows, m.netRows()...)
	title := "faults — the run stands still while this menu is open"
	switch {
	case v.recorded():
		title = "faults — the run has ended"
	case !v.s.embedded():
		title = "faults — the real Redis server keeps running"
	}
	lines := make([]string, 0, len(rows)+1)
	for _, r := range rows {
		lines = append(lines, th.Key.Render(fmt.Sprintf(" %-4s", r[0]))+th.Text.Render(fmt.Sprintf("%-21s", r[1]))+th.Muted.Render(r[2]))
	}
	lines = append(lines, th.Muted.Render(" esc closes the menu; q quits"))
	if v.status != "" {
		lines = append(lines, th.Accent.Render(" "+v.status))
	}
	return strings.Split(draw.Box(th, title, lines, w, len(lines)+2), "\n")
}

// workerNote says what worker w is doing now.
func (m *faultMenu) workerNote(w int32) string {
	v := m.v
	k := v.tl.N - 1
	for _, l := range v.tl.Locks {
		if spans, _ := v.tl.LockAt(l, k); spans.Len() > 0 && spans.At(spans.Len()-1).Holder == w {
			return fmt.Sprintf("%s holds %s", check.WorkerName(w), l.Name)
		}
	}
	if int(w) < len(v.tl.Workers) {
		return fmt.Sprintf("%s is %s", check.WorkerName(w), v.tl.StateAt(int(w), k))
	}
	return check.WorkerName(w) + " has not started"
}

// nodeNote says what node i holds.
func (m *faultMenu) nodeNote(i int) string {
	v := m.v
	nodes := max(v.s.header.Params.Nodes, 1)
	if i == 0 {
		return fmt.Sprintf("node 0 of %d holds the data: stopping it ends the run", nodes)
	}
	return fmt.Sprintf("node %d of %d holds only locks", i, nodes)
}
