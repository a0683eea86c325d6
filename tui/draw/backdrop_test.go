package draw

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/themes"
	"github.com/muesli/termenv"
)

// The light theme brings its own background: every cell of every line is
// on it, also after an inner style's reset, whatever the terminal's own.
func TestLightThemePaintsItsOwnBackground(t *testing.T) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	lipgloss.SetColorProfile(termenv.ANSI256)
	th := themes.Light()
	bg := paintOf(lipgloss.NewStyle().Background(lipgloss.Color(th.Terminal.BG))).pre
	if bg == "" {
		t.Fatal("no background code under ANSI256")
	}
	screen := th.Title.Render("locklab") + " plain " + th.Alarm.Render("alarm") + "\nsecond"
	got := Backdrop(th, screen, 40)
	for i, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w != 40 {
			t.Errorf("line %d is %d cells wide, want 40", i, w)
		}
		segs := strings.Split(l, "\x1b[0m")
		for j, s := range segs[:len(segs)-1] { // every stretch after a reset starts on the background
			if j > 0 && !strings.Contains(s, "48;5;") {
				t.Errorf("line %d: a stretch after a reset has no background: %q", i, s)
			}
		}
	}
	if mono := Backdrop(themes.Mono(), screen, 40); mono != screen {
		t.Error("mono painted a background: it keeps the terminal's")
	}
}
