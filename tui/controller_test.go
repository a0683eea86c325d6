package tui

import (
	"slices"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/themes"
)

// everyKey is every printable key and the named keys the views bind.
func everyKey() []tea.KeyMsg {
	var out []tea.KeyMsg
	for r := '!'; r <= '~'; r++ {
		out = append(out, keyRunes(string(r)))
	}
	for _, t := range []tea.KeyType{tea.KeySpace, tea.KeyUp, tea.KeyDown, tea.KeyLeft, tea.KeyRight, tea.KeyEnter,
		tea.KeyEsc, tea.KeyTab, tea.KeyShiftTab, tea.KeyHome, tea.KeyEnd, tea.KeyPgUp, tea.KeyPgDown, tea.KeyF5, tea.KeyF17} {
		out = append(out, tea.KeyMsg{Type: t})
	}
	return out
}

// helpIsTrue checks that help names exactly the keys that work in cs: every
// binding help lists takes one of its keys, and every key a binding with
// help text takes is listed under that binding.
func helpIsTrue(t *testing.T, mode string, cs []controller) {
	t.Helper()
	listed := map[key.Help]bool{}
	for _, b := range helpOf(cs).full[0] {
		listed[b.Help()] = true
	}
	works := map[key.Help]bool{}
	for _, msg := range everyKey() {
		b, _, _ := taker(msg, cs)
		if b == nil || b.Help().Key == "" {
			continue
		}
		works[b.Help()] = true
		if !listed[b.Help()] {
			t.Errorf("%s: %q works (%s %s) but help does not list it", mode, msg.String(), b.Help().Key, b.Help().Desc)
		}
	}
	for h := range listed {
		if !works[h] {
			t.Errorf("%s: help lists %q %q, which no key reaches", mode, h.Key, h.Desc)
		}
	}
}

// TestHelpListsExactlyTheKeysThatWork, in each mode of the run view and
// in the room's view.
func TestHelpListsExactlyTheKeysThatWork(t *testing.T) {
	t.Parallel()
	a := New(Options{Theme: themes.Mono()})
	a.run, a.screen = loadView(t, "ttl-lapse.jsonl"), screenRun
	helpIsTrue(t, "replay", a.controllers())

	a.run.pr.on = true
	helpIsTrue(t, "replay in presenter mode", a.controllers())
	if b, _, _ := taker(keyRunes("."), a.controllers()); b == nil || b.Help().Key != "" {
		t.Error("on stage, . is not the stage's")
	}
	a.run.pr.on = false

	a.run.faults.open = true
	cs := a.controllers()
	helpIsTrue(t, "fault menu", cs)
	if h := helpOf(cs); len(h.short) != 1 || h.short[0].Help().Key != "esc" {
		t.Errorf("the fault menu's footer: %v", h.short)
	}
	if ok, _ := press(keyRunes("+"), cs...); !ok || a.run.speed != 1 {
		t.Error("a key the fault menu does not know went past it")
	}

	v := hostViewOf(t, openWorkshop{}, laneNames("alice", 2), 120, 36)
	helpIsTrue(t, "host", v.controllers())
	for _, k := range []string{"r", "n", "f"} {
		b, _, _ := taker(keyRunes(k), v.controllers())
		if b != nil && slices.Contains([]string{"rerun", "new seed", "faults"}, b.Help().Desc) {
			t.Errorf("the room's view gives %q to %s", k, b.Help().Desc)
		}
	}
}
