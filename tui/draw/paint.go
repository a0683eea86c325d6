package draw

import (
	"strings"
	"sync"

	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/themes"
)

// paint is a style rendered once into the escape codes around its text, so
// hot paths can style by concatenation. Only for styles without padding,
// margins or borders.
type paint struct{ pre, post string }

func paintOf(st lipgloss.Style) paint {
	const mark = "\x1f"
	r := st.Render(mark)
	i := strings.Index(r, mark)
	if i < 0 {
		return paint{}
	}
	return paint{r[:i], r[i+len(mark):]}
}

func (p paint) wrap(s string) string { return p.pre + s + p.post }

// look is a theme's paints, built once per theme.
type look struct {
	theme   *themes.Theme
	profile string
	states  [themes.StateCount]paint
	workers []paint
	border  paint
	syms    [themes.SymbolCount]paint // for a holder's symbols: worker 0's
	muted   paint
	mu      sync.Mutex
	legends map[themes.Place]string // built as first drawn
}

// looks are the looks built, per theme. Views in one process may draw at
// once (the host's screen and its SSH viewers, each in the theme its
// viewer picked), so they are read and set under its lock; each theme
// keeps its look while others draw, up to lookKeep themes.
var looks struct {
	sync.Mutex
	by map[*themes.Theme]*look
}

// lookKeep is the most themes whose looks are kept: past it, all are
// built anew as they are drawn.
const lookKeep = 32

// lookOf returns th's paints, rebuilding them when the theme or the colour
// profile changed.
func lookOf(th *themes.Theme) *look {
	profile := lipgloss.NewStyle().Bold(true).Render("x") // changes with the profile
	looks.Lock()
	defer looks.Unlock()
	if l := looks.by[th]; l != nil && l.profile == profile {
		return l
	}
	l := &look{theme: th, profile: profile, border: paintOf(th.Border)}
	for i := range l.states {
		l.states[i] = paintOf(th.States[i])
	}
	for _, w := range th.Workers {
		l.workers = append(l.workers, paintOf(w))
	}
	for s := range l.syms {
		l.syms[s] = paintOf(th.Style(themes.Symbol(s), 0))
	}
	l.muted = paintOf(th.Muted)
	l.legends = map[themes.Place]string{}
	if looks.by == nil || len(looks.by) >= lookKeep {
		looks.by = map[*themes.Theme]*look{}
	}
	looks.by[th] = l
	return l
}

func (l *look) worker(w int) paint {
	if len(l.workers) == 0 || w < 0 {
		return paint{}
	}
	return l.workers[w%len(l.workers)]
}

// mark is th.Mark(s, 0), painted.
func (l *look) mark(s themes.Symbol) string {
	return l.syms[s].wrap(string(themes.Table[s].Rune))
}

// glyphRuns are 64 glyphs of each state, cut to length as cells are written.
var glyphRuns = func() (r [themes.StateCount]string) {
	for s := range r {
		r[s] = strings.Repeat(string(themes.Glyphs[s]), 64)
	}
	return r
}()

// cells writes n glyphs of state s.
func (l *look) cells(b *strings.Builder, s themes.State, n int) {
	p := l.states[s]
	b.WriteString(p.pre)
	run, g := glyphRuns[s], len(string(themes.Glyphs[s]))
	for ; n > 0; n -= len(run) / g {
		b.WriteString(run[:min(n, len(run)/g)*g])
	}
	b.WriteString(p.post)
}
