package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
)

// footerView is the one-line key help: the bindings in must always stay
// (? help, q quit); the others are dropped from the end of short — the
// least important — until the line fits in w cells.
func footerView(th *themes.Theme, short, must []key.Binding, w int) string {
	entry := func(b key.Binding) string {
		return th.Key.Render(b.Help().Key) + " " + th.KeyDesc.Render(b.Help().Desc)
	}
	sep := th.Muted.Render(" • ")
	var opt []string
	for _, b := range short {
		if b.Enabled() && b.Help().Key != "" {
			opt = append(opt, entry(b))
		}
	}
	var tail []string
	for _, b := range must {
		if b.Enabled() {
			tail = append(tail, entry(b))
		}
	}
	for n := len(opt); n >= 0; n-- {
		line := strings.Join(append(append([]string(nil), opt[:n]...), tail...), sep)
		if ansi.StringWidth(line) <= w || n == 0 {
			return line
		}
	}
	return ""
}

// flow lays entries out in columns of one width, filled top to bottom, as
// many as fit in w cells; an entry wider than w is cut.
func flow(entries []string, w int) []string {
	const gap = 3
	if len(entries) == 0 {
		return nil
	}
	colW := 0
	for _, e := range entries {
		colW = max(colW, ansi.StringWidth(e))
	}
	colW = min(colW, w)
	cols := max(1, (w+gap)/(colW+gap))
	rows := (len(entries) + cols - 1) / cols
	lines := make([]string, rows)
	for i, e := range entries {
		r, c := i%rows, i/rows
		cell := ansi.Truncate(e, colW, "…")
		if c < cols-1 && i+rows < len(entries) {
			cell += strings.Repeat(" ", colW-ansi.StringWidth(cell)+gap)
		}
		lines[r] += cell
	}
	return lines
}

// helpText is the help overlay's content, laid out for w cells: the keys
// of this screen and the glyph legend, each flowed into the columns that
// fit. A glyph group's title heads its entries when there is room for
// blank lines, else it leads them inline.
func helpText(th *themes.Theme, groups [][]key.Binding, legend []draw.LegendGroup, w, h int) []string {
	var keys []string
	for _, g := range groups {
		for _, b := range g {
			if b.Enabled() && b.Help().Key != "" {
				keys = append(keys, th.Key.Render(b.Help().Key)+" "+th.KeyDesc.Render(b.Help().Desc))
			}
		}
	}
	closing := th.Muted.Render("esc or ? closes this help")
	roomy := []string{th.Title.Render("keys")}
	roomy = append(roomy, flow(keys, w)...)
	for _, g := range legend {
		if len(g.Entries) == 0 {
			continue
		}
		roomy = append(roomy, "", th.Title.Render(g.Title))
		roomy = append(roomy, flow(g.Entries, w)...)
	}
	roomy = append(roomy, "", closing)
	if len(roomy) <= h {
		return roomy
	}
	// Tight: the titles go inline and the blank lines go.
	tight := flow(keys, w)
	for _, g := range legend {
		if len(g.Entries) == 0 {
			continue
		}
		entries := append([]string{th.Title.Render(g.Title + ":")}, g.Entries...)
		tight = append(tight, flow(entries, w)...)
	}
	if len(tight) >= h { // still too tall: cut, and say so
		tight = append(tight[:max(h-1, 0)], th.Warn.Render("… a taller window shows the rest"))
		return tight
	}
	return append(tight, closing)
}

// helpView is the help overlay: a bordered box centred on the screen,
// never wider or taller than it.
func (a *App) helpView(th *themes.Theme, keys helpMap) string {
	inner := min(a.w, 132) - 4 // border and a cell of padding each side
	lines := helpText(th, keys.full, draw.LegendGroups(th), inner, a.h-2)
	text := strings.Join(lines, "\n")
	boxed := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(th.Border.GetForeground()).
		Padding(0, 1).Render(text)
	return lipgloss.Place(a.w, a.h, lipgloss.Center, lipgloss.Center, boxed)
}

// wrapLines wraps each line at w cells, styles kept, words whole where
// they can be.
func wrapLines(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, w, ""), "\n")...)
	}
	return out
}
