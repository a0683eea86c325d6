package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// netKeys put network faults on the aimed worker's link to the aimed node
// (the fault menu's tab and n), or lift the one of that kind in force.
type netKeys struct {
	Latency, Bandwidth, BlackHole, Reset, SlowClose, Limit, Partition, Dir key.Binding
}

func defaultNetKeys() netKeys {
	return netKeys{
		Latency:   bind([]string{"l"}, "l", "latency"),
		Bandwidth: bind([]string{"b"}, "b", "bandwidth"),
		BlackHole: bind([]string{"h"}, "h", "black hole"),
		Reset:     bind([]string{"x"}, "x", "reset peer"),
		SlowClose: bind([]string{"k"}, "k", "slow close"),
		Limit:     bind([]string{"d"}, "d", "limit data"),
		Partition: bind([]string{"i"}, "i", "partition"),
		Dir:       bind([]string{"u"}, "u", "direction"),
	}
}

// netToxic is the fault a network key puts on a link, sized to the run's
// TTL so that it tells: latency a quarter of it, give or take a tenth.
func (m *faultMenu) netToxic(kind store.ToxicKind) store.Toxic {
	v := m.v
	ttl := v.s.header.Params.TTL.D()
	dir := m.dir
	if dir == 0 {
		dir = store.Both
	}
	t := store.Toxic{Kind: kind, Dir: dir}
	switch kind {
	case store.ToxicLatency:
		t.D, t.Jitter = ttl/4, ttl/10
	case store.ToxicBandwidth:
		t.Rate = 1 << 10
	case store.ToxicSlowClose:
		t.D = ttl / 2
	case store.ToxicLimitData:
		t.Bytes = 64
	case store.ToxicPartition:
		t.Dir = store.Both
	}
	return t
}

// netBindings are the open fault menu's network keys: each puts its fault
// on the aimed link, or lifts it; u turns the way they act.
func (m *faultMenu) netBindings() []binding {
	v := m.v
	k, f := m.keys.net, m
	toggle := func(kind store.ToxicKind) func(tea.KeyMsg) tea.Cmd {
		return act(func() {
			if v.recorded() {
				v.status = "the run has ended: nothing left to break — esc closes the menu"
				return
			}
			m.say(v.s.run.ToggleNet(f.worker, f.node, m.netToxic(kind)))
		})
	}
	turn := func() {
		f.dir = map[store.Dir]store.Dir{0: store.Up, store.Both: store.Up, store.Up: store.Down, store.Down: store.Both}[f.dir]
		v.status = "network faults act " + map[store.Dir]string{store.Up: "on requests only (up)", store.Down: "on replies only (down)", store.Both: "both ways"}[f.dir]
	}
	return []binding{
		{k.Latency, footNone, toggle(store.ToxicLatency)},
		{k.Bandwidth, footNone, toggle(store.ToxicBandwidth)},
		{k.BlackHole, footNone, toggle(store.ToxicTimeout)},
		{k.Reset, footNone, toggle(store.ToxicReset)},
		{k.SlowClose, footNone, toggle(store.ToxicSlowClose)},
		{k.Limit, footNone, toggle(store.ToxicLimitData)},
		{k.Partition, footNone, toggle(store.ToxicPartition)},
		{k.Dir, footNone, act(turn)},
	}
}

// netRows are the fault menu's network rows, aimed at the worker and node
// the menu aims at.
func (m *faultMenu) netRows() [][3]string {
	f := *m
	link := scenario.Link(f.worker, f.node)
	desc := func(kind store.ToxicKind) string { return m.netToxic(kind).String() }
	return [][3]string{
		{"l", "latency", fmt.Sprintf("%s on %s (again: lift)", desc(store.ToxicLatency), link)},
		{"b", "bandwidth", desc(store.ToxicBandwidth) + ": a slow link"},
		{"h", "black hole", "requests or replies vanish; the client waits for its timeout"},
		{"x", "reset peer", "the connection is reset (RST): a reply lost is an unknown outcome"},
		{"k", "slow close", desc(store.ToxicSlowClose) + ": a closed connection is seen late"},
		{"d", "limit data", desc(store.ToxicLimitData) + ": the connection closes past it"},
		{"i", "partition", fmt.Sprintf("%s cut off: dials refused, connections reset", link)},
		{"u", "direction", "network faults act " + m.dirWord()},
	}
}

func (m *faultMenu) dirWord() string {
	switch m.dir {
	case store.Up:
		return "on requests (up)"
	case store.Down:
		return "on replies (down)"
	}
	return "both ways"
}
