package tui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/themes"
)

type hostKeys struct {
	Open, Steer, Board, Theme, Help, Quit key.Binding
}

func defaultHostKeys(host bool) hostKeys {
	k := hostKeys{
		Open:  bind([]string{"enter", "n"}, "enter", "new round"),
		Steer: bind([]string{"m"}, "m", "next round's lock"),
		Board: bind([]string{"l"}, "l", "leaderboard"),
		Theme: bind([]string{"t"}, "t", "theme"),
		Help:  bind([]string{"?"}, "?", "help"),
		Quit:  bind([]string{"q", "ctrl+c"}, "q", "quit"),
	}
	k.Open.SetEnabled(host)
	k.Steer.SetEnabled(false) // until the room says it can be steered
	return k
}

// controllers are the room view's modes, in the order a key goes to them:
// the host's question, the next round's menu, the room's keys, then the
// round's (presenter mode, playback and the run on screen; no fault, no
// rerun: a round is everyone's).
func (v *HostView) controllers() []controller {
	cs := []controller{askCtl{v}, steerCtl{v}, hostCtl{v}}
	if r := v.run; r != nil {
		cs = append(cs, presentCtl{r, nil}, playCtl{r}, runCtl{r})
	}
	return cs
}

func (v *HostView) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	_, cmd := press(msg, v.controllers()...)
	return v, cmd
}

func (v *HostView) helpKeys() helpMap { return helpOf(v.controllers()) }

// hostCtl is the room's own keys: a new round (the host's), the next
// round's lock, the leaderboard, theme, help and quit.
type hostCtl struct{ v *HostView }

func (c hostCtl) keys() []binding {
	v, k := c.v, c.v.keys
	closeHelp := bind([]string{"esc"}, "", "")
	closeHelp.SetEnabled(v.showHelp)
	return []binding{
		{k.Open, footOpen, func(tea.KeyMsg) tea.Cmd { return v.openRound() }},
		{k.Steer, footSteer, act(func() { v.menu = steerMenu{open: true, next: v.ws.(Steerable).Next()} })},
		{k.Board, footBoard, act(func() { v.standings = !v.standings })},
		{k.Theme, footTheme, act(func() { v.theme = themes.Next(v.theme) })},
		{k.Help, footNone, act(func() { v.showHelp = !v.showHelp })},
		{k.Quit, footNone, v.quitKey},
		{closeHelp, footNone, act(func() { v.showHelp = false })},
	}
}

// quitKey quits; the host's q, once rounds were raced, ends the room for
// everyone, so it asks first.
func (v *HostView) quitKey(msg tea.KeyMsg) tea.Cmd {
	if msg.String() == "q" && v.ws != nil && !v.stage.Requests && len(v.stage.Runs()) > 0 {
		v.asking = true
		return nil
	}
	return tea.Quit
}

// openRound asks the workshop for a new round, unless one is opening.
func (v *HostView) openRound() tea.Cmd {
	if v.opening {
		return nil
	}
	v.opening, v.err = true, ""
	ws := v.ws
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := ws.Open(ctx)
		return openedMsg{r, err}
	}
}

// askCtl is the host's question before the room ends: y quits, any other
// key goes on.
type askCtl struct{ v *HostView }

func (c askCtl) open() bool { return c.v.asking }

func (c askCtl) keys() []binding {
	if !c.v.asking {
		return nil
	}
	return []binding{{bind([]string{"y", "ctrl+c"}, "y", "end the room"), footNone, func(tea.KeyMsg) tea.Cmd { return tea.Quit }}}
}

func (c askCtl) rest(tea.KeyMsg) tea.Cmd {
	c.v.asking = false
	return nil
}

// steerCtl is the next round's menu (steer.go): it takes every key.
type steerCtl struct{ v *HostView }

func (c steerCtl) open() bool                  { return c.v.menu.open }
func (c steerCtl) keys() []binding             { return nil }
func (c steerCtl) rest(msg tea.KeyMsg) tea.Cmd { return c.v.steerKey(msg) }
