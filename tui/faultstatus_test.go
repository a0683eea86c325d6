package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// The fault menu's advice about a key it does not know goes when the menu
// closes: it is about the menu, and would mislead under the run view.
func TestTheFaultMenusAdviceGoesWithIt(t *testing.T) {
	v := loadView(t, "crash.jsonl")
	v.faults.open = true // a replay's f does not open it: the menu is tried alone
	press(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("+")}, faultCtl{v})
	if !strings.Contains(v.status, `"+" is not a fault key`) {
		t.Fatalf("the menu did not explain the key: %q", v.status)
	}
	press(tea.KeyMsg{Type: tea.KeyEsc}, faultCtl{v})
	if v.faults.open || v.status != "" {
		t.Fatalf("after esc: menu open %v, status %q", v.faults.open, v.status)
	}
}
