package tui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// A view's modes — playback, a live run's or a replay's own keys,
// presenter mode, the scheduler, the fault menu, a talk, the host — are
// controllers: each owns its keys, and each key's binding says what it
// matches, what help says of it and what it does. A key goes to the
// controllers in order, and the first binding that matches it takes it.
// Help is drawn from the same bindings, so it names exactly the keys that
// work now.

// binding is one key of a controller.
type binding struct {
	key.Binding
	foot int                      // its place in the footer (see the foot ranks); 0: help only
	do   func(tea.KeyMsg) tea.Cmd // what it does
}

// controller is one mode of a view.
type controller interface {
	// keys are the bindings that work now, in the order help lists them.
	keys() []binding
}

// modal is a controller that, while open, takes every key that reaches
// it: rest handles those none of its bindings matched.
type modal interface {
	controller
	open() bool
	rest(tea.KeyMsg) tea.Cmd
}

// act is a binding's action that needs neither the key nor a command.
func act(f func()) func(tea.KeyMsg) tea.Cmd {
	return func(tea.KeyMsg) tea.Cmd { f(); return nil }
}

// taker is what takes msg among cs: a binding, or a modal controller's
// rest (b nil); ok false when no controller takes it.
func taker(msg tea.KeyMsg, cs []controller) (b *binding, m modal, ok bool) {
	for _, c := range cs {
		bs := c.keys()
		for i := range bs {
			if key.Matches(msg, bs[i].Binding) {
				return &bs[i], nil, true
			}
		}
		if m, isModal := c.(modal); isModal && m.open() {
			return nil, m, true
		}
	}
	return nil, nil, false
}

// press gives msg to the controller that takes it; false when none does.
func press(msg tea.KeyMsg, cs ...controller) (bool, tea.Cmd) {
	b, m, ok := taker(msg, cs)
	switch {
	case b != nil:
		return true, b.do(msg)
	case m != nil:
		return true, m.rest(msg)
	}
	return ok, nil
}

// helpOf is the help of cs: every binding a key still reaches (one whose
// keys an earlier binding all takes is left out), in order, and nothing
// past an open modal controller; the footer's in their foot order.
func helpOf(cs []controller) helpMap {
	taken := map[string]bool{}
	var full []key.Binding
	var short []binding
	for _, c := range cs {
		for _, b := range c.keys() {
			if !b.Enabled() {
				continue
			}
			reached := false
			for _, k := range b.Keys() {
				reached = reached || !taken[k]
				taken[k] = true
			}
			if !reached || b.Help().Key == "" {
				continue
			}
			full = append(full, b.Binding)
			if b.foot > 0 {
				short = append(short, b)
			}
		}
		if m, ok := c.(modal); ok && m.open() {
			break
		}
	}
	slices.SortStableFunc(short, func(a, b binding) int { return a.foot - b.foot })
	h := helpMap{full: [][]key.Binding{full}}
	for _, b := range short {
		h.short = append(h.short, b.Binding)
	}
	return h
}

// The footer's order, most important first: a narrow footer drops from
// the end. A mode's own keys come before playback's.
const (
	footNone = iota
	footOpen
	footSteer
	footBoard
	footBeatNext
	footBeatPrev
	footBlank
	footLeave
	footClose
	footCard
	footCardBack
	footPick
	footEnter
	footWait
	footSeed
	footUndo
	footChoose
	footPause
	footFaster
	footSlower
	footSeekBack
	footSeekFwd
	footFaults
	footBranch
	footSwitch
	footManual
	footStepFwd
	footStepBack
	footPrevMark
	footNextMark
	footStart
	footPresent
	footRerun
	footBack
	footTheme
)
