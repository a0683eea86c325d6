package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/tui/draw"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/themes"
)

// The help overlay fits every size from 80×24: its border is whole and
// every legend entry and key stands inside it.
func TestGoldenHelpFits(t *testing.T) {
	t.Parallel()
	th := themes.Mono()
	for _, sz := range [][2]int{{80, 24}, {120, 36}, {200, 60}} {
		v := loadView(t, "ttl-lapse.jsonl")
		a := New(Options{Theme: th})
		a.run, a.screen = v, screenRun
		a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		a.Update(keyRunes("?"))
		got := a.View()
		lines := strings.Split(got, "\n")
		if len(lines) > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		top, bottom := -1, -1
		for i, l := range lines {
			if w := ansi.StringWidth(l); w > sz[0] {
				t.Errorf("%dx%d: line %d is %d wide", sz[0], sz[1], i, w)
			}
			if strings.Contains(l, "╭") {
				top = i
			}
			if strings.Contains(l, "╰") {
				bottom = i
			}
		}
		if top < 0 || bottom < 0 {
			t.Fatalf("%dx%d: the border is cut:\n%s", sz[0], sz[1], got)
		}
		inside := strings.Join(lines[top:bottom+1], "\n")
		var want []string
		for _, g := range draw.LegendGroups(th) {
			want = append(want, g.Entries...)
		}
		for _, b := range helpOf(a.controllers()).full {
			for _, k := range b {
				if k.Enabled() {
					want = append(want, k.Help().Key+" "+k.Help().Desc)
				}
			}
		}
		want = append(want, "? help", "q quit", "esc or ? closes this help")
		for _, w := range want {
			if !strings.Contains(inside, w) {
				t.Errorf("%dx%d: %q is not inside the help's border", sz[0], sz[1], w)
			}
		}
		if sz == [2]int{80, 24} {
			golden(t, fmt.Sprintf("help-%dx%d", sz[0], sz[1]), got)
		}
	}
}

// The footer keeps ? help and q quit at any width, and drops the least
// important bindings first.
func TestFooterKeepsHelpAndQuit(t *testing.T) {
	t.Parallel()
	th := themes.Mono()
	a := New(Options{Theme: th})
	a.run, a.screen = loadView(t, "ttl-lapse.jsonl"), screenRun
	g := defaultGlobalKeys()
	prev := -1
	for w := 20; w <= 240; w += 10 {
		f := footerView(th, append(helpOf(a.controllers()).short, g.Theme), []key.Binding{g.Help, g.Quit}, w)
		if !strings.HasSuffix(f, "? help • q quit") {
			t.Fatalf("at %d columns: %q", w, f)
		}
		if w >= 50 && ansi.StringWidth(f) > w {
			t.Fatalf("at %d columns the footer is %d wide", w, ansi.StringWidth(f))
		}
		if !strings.HasPrefix(f, "space pause") && w >= 50 {
			t.Fatalf("at %d columns the most important binding went: %q", w, f)
		}
		n := strings.Count(f, "•")
		if n < prev {
			t.Fatalf("a wider footer (%d) shows fewer bindings", w)
		}
		prev = n
	}
}

// Verdict text wraps at the width instead of ending in "…".
func TestVerdictWraps(t *testing.T) {
	t.Parallel()
	v := loadView(t, "ttl-lapse.jsonl")
	v.toLive()
	got := v.View(themes.Mono(), 80, 23)
	if !strings.Contains(strings.ReplaceAll(got, "\n", " "), v.s.summary.Detail[:40]) {
		t.Fatalf("the verdict's detail is not all there:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, v.s.summary.Verdict[:10]) && strings.HasSuffix(strings.TrimSpace(l), "…") {
			t.Fatalf("the verdict is cut: %q", l)
		}
	}
}
