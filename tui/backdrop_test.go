package tui

import (
	"strings"
	"testing"
	"time"

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
	got := backdrop(th, screen, 40)
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
	if mono := backdrop(themes.Mono(), screen, 40); mono != screen {
		t.Error("mono painted a background: it keeps the terminal's")
	}
}

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// t names the theme it switched to, for a moment.
func TestThemeKeyFlashesTheName(t *testing.T) {
	a := New(Options{Theme: themes.Mono()})
	a.Update(frameMsg(epoch))
	a.Update(keyRunes("t"))
	if v := a.View(); !strings.Contains(v, "theme: dark") {
		t.Fatalf("no theme name after t:\n%s", v)
	}
	a.Update(frameMsg(epoch.Add(flashFor / 2)))
	if v := a.View(); !strings.Contains(v, "theme: dark") {
		t.Fatal("the theme's name went at once")
	}
	a.Update(frameMsg(epoch.Add(2 * flashFor)))
	if v := a.View(); strings.Contains(v, "theme: dark") {
		t.Fatal("the theme's name stayed")
	}
}

// BenchmarkBackdrop is the cost the light theme's own background adds to a
// 160×48 frame.
func BenchmarkBackdrop(b *testing.B) {
	defer lipgloss.SetColorProfile(lipgloss.ColorProfile())
	lipgloss.SetColorProfile(termenv.ANSI256)
	th := themes.Light()
	v := loadView(b, "ttl-lapse.jsonl")
	v.toLive()
	frame := v.View(th, 160, 47)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		_ = backdrop(th, frame+strings.Repeat(" ", i%2), 160) // a new frame every time
	}
}
