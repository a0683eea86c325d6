package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/themes"
)

// TestAFullLobbyKeepsTheWaysIn: a lobby of 130 at 80×24 lists whom it
// can in columns and counts the rest; the head count, the next round and
// the ways in stay on screen, and no line is wider than the window.
func TestAFullLobbyKeepsTheWaysIn(t *testing.T) {
	st := NewStage("room load", "")
	var l []Attendee
	for i := range 130 {
		l = append(l, Attendee{Name: fmt.Sprintf("p%03d", i+1), Workers: 3})
	}
	st.setLobby(l, nil)
	st.SetNext("next round: oversell with safe · retry none · stock 100")
	st.WaysIn = []string{"ssh -p 2222 load@192.0.2.5", "locklab join K7QX2M@192.0.2.5"}
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		v := NewHostView(st, nil, themes.Mono(), size[0], size[1])
		screen := ansi.Strip(v.View())
		lines := strings.Split(screen, "\n")
		if len(lines) != size[1] {
			t.Errorf("%v: %d lines", size, len(lines))
		}
		for _, want := range []string{"130 attendee(s), 390 worker(s)", "next round: oversell", "locklab join K7QX2M@192.0.2.5", "p001 3 worker(s)"} {
			if !strings.Contains(screen, want) {
				t.Errorf("%v: no %q in\n%s", size, want, screen)
			}
		}
		if size[0] == 80 && !strings.Contains(screen, "more") {
			t.Errorf("80×24 lists all 130 or says nothing of the rest:\n%s", screen)
		}
		for _, line := range lines {
			if w := ansi.StringWidth(line); w > size[0] {
				t.Errorf("%v: a line of %d cells: %q", size, w, line)
			}
		}
	}
}
