package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// On stage, "." is a remote's: tapped, it goes on like →; held (its
// black-screen button), it blanks the screen. A terminal tells a held key
// only by repeating it after its repeat delay, so a tap is known for one
// when no second "." follows within dotHold.
const (
	// dotHold is longer than the common repeat delays (250–660 ms).
	dotHold = 700 * time.Millisecond
	// dotRepeat: on a dark screen, a "." this soon after the last one is
	// the held button still repeating, not a press that brings the talk back.
	dotRepeat = 250 * time.Millisecond
)

// dotKey is what the stage remembers of ".".
type dotKey struct {
	at      time.Time // the last "."
	seq     int       // taps so far
	pending int       // the tap waiting to be known for one, 0 when none
}

// dotTapMsg says that tap seq was not followed by another "." in time.
type dotTapMsg int

// dots is how many "." msg holds: a key repeated faster than the terminal
// is read arrives as one message of several.
func dots(msg tea.KeyMsg) int {
	if msg.Type != tea.KeyRunes || len(msg.Runes) == 0 {
		return 0
	}
	for _, r := range msg.Runes {
		if r != '.' {
			return 0
		}
	}
	return len(msg.Runes)
}

// handleDot takes n "." on stage.
func (a *App) handleDot(n int) tea.Cmd {
	now := a.now()
	last := a.dot.at
	a.dot.at = now
	switch {
	case a.blank:
		if now.Sub(last) >= dotRepeat {
			a.blank = false
		}
		return nil
	case n > 1 || a.dot.pending != 0 && now.Sub(last) < dotHold:
		a.dot.pending = 0 // held: the first "." was no tap
		a.blank = true
		return nil
	}
	a.dot.seq++
	a.dot.pending = a.dot.seq
	seq := a.dot.seq
	return tea.Tick(dotHold, func(time.Time) tea.Msg { return dotTapMsg(seq) })
}

// dotTapped goes on as → does, once tap seq is known for a tap.
func (a *App) dotTapped(seq dotTapMsg) (tea.Model, tea.Cmd) {
	if int(seq) != a.dot.pending || a.blank {
		return a, nil
	}
	a.dot.pending = 0
	return a.handleKey(tea.KeyMsg{Type: tea.KeyRight})
}
