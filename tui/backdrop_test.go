package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/tui/draw"

	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/themes"
	"github.com/muesli/termenv"
)

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
		_ = draw.Backdrop(th, frame+strings.Repeat(" ", i%2), 160) // a new frame every time
	}
}
