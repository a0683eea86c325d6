package draw

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// blank is a lane cell before a worker starts or after it is done.
const blank = themes.StateCount

// lanePrio decides which state a column shows when several occurred in it:
// the short, telling ones win, so no state that happened goes unseen.
var lanePrio = []themes.State{themes.Violation, themes.Crashed, themes.Critical, themes.Holding,
	themes.Paused, themes.Waiting, themes.Attempting, themes.DoneFail, themes.DoneOK, themes.Idle}

const outcomes = 1<<themes.DoneOK | 1<<themes.DoneFail

// LaneCells computes worker w's cells at cursor k up to time now, from the
// timeline's per-column summaries: each column shows the most telling
// state that occurred in it. An outcome that shares its column with
// something more telling is drawn in the next column.
func LaneCells(dst []themes.State, masks []uint16, tl *timeline.Timeline, w, k int, sc Scale, now time.Duration) []themes.State {
	masks = masks[:sc.cols]
	tl.Columns(masks, w, k, now, sc.span)
	dst = dst[:0]
	for _, m := range masks {
		dst = append(dst, pick(m))
	}
	for c, m := range masks {
		if m&outcomes == 0 || dst[c] == themes.DoneOK || dst[c] == themes.DoneFail {
			continue
		}
		out := themes.DoneOK
		if m&(1<<themes.DoneFail) != 0 {
			out = themes.DoneFail
		}
		switch {
		case c+1 < len(masks) && masks[c+1] == 0:
			dst[c+1] = out
		case c+1 == len(masks) && (dst[c] == themes.Critical || dst[c] == themes.Holding || dst[c] == themes.Waiting):
			// The right edge: the outcome is the news, but a hold that
			// fits in this one column (a short critical section at
			// the end of the window) keeps its cell, one column early,
			// over a less telling state.
			if c > 0 && dst[c] != themes.Waiting && rank(dst[c]) < rank(dst[c-1]) {
				dst[c-1] = dst[c]
			}
			dst[c] = out
		}
	}
	return dst
}

// pick is the state a column with states m shows.
func pick(m uint16) themes.State {
	if int(m) < len(picks) {
		return picks[m]
	}
	return pickSlow(m)
}

// picks is pickSlow of every set of states, looked up once per cell.
var picks = func() (t [1 << themes.StateCount]themes.State) {
	for m := range t {
		t[m] = pickSlow(uint16(m))
	}
	return t
}()

// rank is s's place in lanePrio: lower is more telling.
func rank(s themes.State) int {
	for i, p := range lanePrio {
		if p == s {
			return i
		}
	}
	return len(lanePrio)
}

func pickSlow(m uint16) themes.State {
	if m == 0 {
		return blank
	}
	for _, s := range lanePrio {
		if m&(1<<s) != 0 {
			return s
		}
	}
	return blank
}

// renderCells styles a row of cells, one style change per run.
func renderCells(lk *look, b *strings.Builder, cells []themes.State) {
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j] == cells[i] {
			j++
		}
		if cells[i] == blank {
			b.WriteString(strings.Repeat(" ", j-i))
		} else {
			lk.cells(b, cells[i], j-i)
		}
		i = j
	}
}

// LanesFocus renders the swimlanes box's content — one row per worker
// (identical rows of one participant folded together when they do not
// fit), then the time axis — over a window of span (at least now: what is
// past now is left blank, the time still to come), scrolled, when scroll
// is 0, so that the lanes of the focus workers are in view.
func LanesFocus(th *themes.Theme, tl *timeline.Timeline, k int, now, span time.Duration, width, labelW, rows, scroll int, focus []int32) []string {
	if rows < 2 {
		return nil
	}
	cols := max(width-labelW-1, 1)
	span = max(span, now)
	sc := NewScale(span, cols)
	type group struct {
		first   int
		members []int
		cells   []themes.State
	}
	var groups []group
	index := map[string]int{}
	shown := shownWorkers(tl, k)
	fold := len(shown) > rows-1
	var buf []themes.State
	masks := make([]uint16, sc.cols)
	lo, hi := -1, -1 // the groups of the focus workers
	for i, w := range shown {
		buf = LaneCells(buf, masks, tl, w, k, sc, now)
		g := len(groups)
		inFocus := slices.Contains(focus, int32(w))
		// A lane folds only while the rest would not fit one row each: as
		// many lanes of their own as the box has rows. A worker in focus
		// keeps a lane of its own, labelled.
		if fold && !inFocus && len(groups)+len(shown)-i > rows-1 {
			// Lanes fold only with lanes of the same participant: one row
			// never stands for alice's and bob's workers at once.
			key := participantOf(tl, w) + "\x00" + string(statesKey(buf))
			if i, ok := index[key]; ok {
				groups[i].members = append(groups[i].members, w)
				g = i
			} else {
				index[key] = g
			}
		}
		if g == len(groups) {
			groups = append(groups, group{first: w, members: []int{w}, cells: append([]themes.State(nil), buf...)})
		}
		if inFocus {
			if lo < 0 || g < lo {
				lo = g
			}
			hi = max(hi, g)
		}
	}
	avail := rows - 1
	if scroll == 0 {
		scroll = focusScroll(lo, hi, avail, len(groups))
	}
	scroll = min(scroll, max(len(groups)-avail, 0))
	lk := lookOf(th)
	var out []string
	var b strings.Builder
	for i := scroll; i < len(groups) && len(out) < avail; i++ {
		g := groups[i]
		b.Reset()
		name := cutLabel(laneName(tl, g.first), labelW)
		if len(g.members) > 1 {
			name = MembersLabel(tl, g.members, labelW)
		}
		b.WriteString(lk.worker(g.first).wrap(name))
		b.WriteString(strings.Repeat(" ", max(labelW-len([]rune(name)), 0)+1))
		renderCells(lk, &b, g.cells)
		out = append(out, b.String())
	}
	// The last row says how many are below, unless it is the only lane
	// shown: a lane says more than a count.
	if hidden := len(groups) - scroll - len(out); hidden > 0 && len(out) > 1 {
		out[len(out)-1] = th.Muted.Render(fmt.Sprintf("  ↓ %d more (↑/↓ to scroll)", hidden))
	}
	for len(out) < avail {
		out = append(out, "")
	}
	return append(out, axis(th, labelW+1, cols, now, span, tl, k))
}

// shownWorkers are the workers with a lane: all of them, or, when lanes
// appear as requests arrive (a served race), those that have begun by
// cursor k — no rows for requests that have not come.
func shownWorkers(tl *timeline.Timeline, k int) []int {
	out := make([]int, 0, len(tl.Workers))
	for w := range tl.Workers {
		if !tl.Arrivals || tl.Started(w, k) {
			out = append(out, w)
		}
	}
	return out
}

// laneName is worker w's lane's name: the log's own (alice/2), else w02.
func laneName(tl *timeline.Timeline, w int) string {
	if w < len(tl.Names) && tl.Names[w] != "" {
		return tl.Names[w]
	}
	return check.WorkerName(int32(w))
}

// MembersLabel names the lanes a folded row stands for, as a list that
// never reads as a range — w01,w07 or alice/1,4 — with +N for those that
// do not fit in w cells.
func MembersLabel(tl *timeline.Timeline, members []int, w int) string {
	var parts []string
	prefix := ""
	for _, m := range members {
		name := laneName(tl, m)
		if prefix != "" && strings.HasPrefix(name, prefix) {
			name = strings.TrimPrefix(name, prefix)
		} else if i := strings.LastIndex(name, "/"); i > 0 && prefix == "" {
			prefix = name[:i+1]
		}
		parts = append(parts, name)
	}
	label := parts[0]
	for i := 1; i < len(parts); i++ {
		next := label + "," + parts[i]
		need := len([]rune(next))
		if rest := len(parts) - i - 1; rest > 0 {
			need += len(fmt.Sprintf("+%d", rest))
		}
		if need > w {
			more := fmt.Sprintf("+%d", len(parts)-i)
			return cutLabel(label, max(w-len(more), 1)) + more
		}
		label = next
	}
	return label
}

// cutLabel shortens a lane's name to w cells, keeping the worker's number
// of a participant's lane (a-very-long-name/3 → a-very-l…/3).
func cutLabel(name string, w int) string {
	r := []rune(name)
	if len(r) <= w {
		return name
	}
	if i := strings.LastIndex(name, "/"); i > 0 {
		tail := []rune(name[i:])
		if keep := w - len(tail) - 1; keep > 0 {
			return string(r[:keep]) + "…" + string(tail)
		}
	}
	return string(r[:w])
}

// participantOf is whose worker w is: the part of its lane's name before
// a '/' (alice/2 → alice), or "" for lanes with no participant.
func participantOf(tl *timeline.Timeline, w int) string {
	if w >= len(tl.Names) {
		return ""
	}
	if p, _, ok := strings.Cut(tl.Names[w], "/"); ok {
		return p
	}
	return ""
}

func statesKey(cells []themes.State) []byte {
	b := make([]byte, len(cells))
	for i, c := range cells {
		b[i] = byte(c)
	}
	return b
}

// markerSyms are the glyphs of the timeline's markers on the axis.
var markerSyms = map[timeline.MarkerKind]themes.Symbol{
	timeline.MarkerViolation: themes.Symbol(themes.Violation), timeline.MarkerExpiry: themes.SymLapse,
	timeline.MarkerDeadlock: themes.SymDeadlock, timeline.MarkerCrash: themes.Symbol(themes.Crashed),
	timeline.MarkerBeat: themes.SymBeat,
}

// axisRank decides which mark a column of the axis shows.
var axisRank = map[themes.Symbol]int{
	themes.Symbol(themes.Violation): 6, themes.SymOverlap: 5, themes.SymLapse: 4,
	themes.Symbol(themes.Crashed): 3, themes.SymDeadlock: 2, themes.SymBeat: 1,
}

// axis is the time axis under the lanes: 0 on the left, the window's span
// (now, unless the window reaches further) on the right, a glyph where each
// marker is ([ and ] jump between them), and the columns where two workers
// were inside one critical section at once.
func axis(th *themes.Theme, indent, cols int, now, span time.Duration, tl *timeline.Timeline, k int) string {
	right := Dur(span)
	mid := Dur(span / 2)
	line := []rune(strings.Repeat("─", cols))
	if cols > 0 {
		line[0] = '0'
	}
	s := string(line)
	if cols > len(right)+len(mid)+6 {
		half := cols / 2
		s = string(line[:half-len(mid)/2]) + mid + string(line[half-len(mid)/2+len([]rune(mid)):])
	}
	r := []rune(s)
	if len(r) > len([]rune(right)) {
		r = append(r[:len(r)-len([]rune(right))], []rune(right)...)
	}
	if tl.Fork >= 0 && len(r) > 0 && tl.Fork <= span {
		// Where a branch and its original part: the same column on both.
		c := len(r) - 1
		if span > 0 {
			c = min(int(int64(tl.Fork)*int64(len(r))/int64(span)), len(r)-1)
		}
		r[c] = '⑂'
	}
	if (len(tl.Markers) == 0 && len(tl.Overlaps) == 0) || len(r) == 0 {
		return strings.Repeat(" ", indent) + th.Muted.Render(string(r))
	}
	// Per-column summaries of the markers and overlaps: the cost does not
	// grow with how many there are.
	sc := NewScale(span, len(r))
	marks, overlaps := make([]uint32, len(r)), make([]bool, len(r))
	tl.MarkerColumns(marks, k, now, sc.span)
	tl.OverlapColumns(overlaps, k, now, sc.span)
	const none = themes.SymbolCount
	at := make([]themes.Symbol, len(r))
	for i := range at {
		at[i] = none
	}
	put := func(c int, sym themes.Symbol) {
		// The nearest line cell at or left of the column: the labels
		// stay legible.
		for c > 0 && r[c] != '─' && at[c] == none {
			c--
		}
		if r[c] == '─' && (at[c] == none || axisRank[sym] > axisRank[at[c]]) {
			at[c] = sym
		}
	}
	for c, o := range overlaps {
		if o {
			put(c, themes.SymOverlap)
		}
	}
	for c, m := range marks {
		for kind := timeline.MarkerKind(0); m>>kind != 0; kind++ {
			if m&(1<<kind) != 0 {
				put(c, markerSyms[kind])
			}
		}
	}
	lk := lookOf(th)
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", indent))
	for i := 0; i < len(r); {
		j := i
		for j < len(r) && at[j] == none {
			j++
		}
		b.WriteString(lk.muted.wrap(string(r[i:j])))
		if j < len(r) {
			b.WriteString(lk.mark(at[j]))
			j++
		}
		i = j
	}
	return b.String()
}

// Legend names every lane glyph, from the glyph table.
func Legend(th *themes.Theme) string {
	return LegendLine(th, themes.InLanes)
}

// LegendLine names the glyphs of place p: "· idle  ? attempting  …".
func LegendLine(th *themes.Theme, p themes.Place) string {
	lk := lookOf(th)
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if s, ok := lk.legends[p]; ok {
		return s
	}
	var parts []string
	for _, s := range themes.Legend(p) {
		g := themes.Table[s]
		parts = append(parts, th.Mark(s, 0)+" "+th.Muted.Render(g.Meaning))
	}
	lk.legends[p] = strings.Join(parts, "  ")
	return lk.legends[p]
}

// LegendGroups are the glyph legend's groups for the help, generated from
// the glyph table: a title and one entry per glyph.
func LegendGroups(th *themes.Theme) []LegendGroup {
	var out []LegendGroup
	for _, g := range []struct {
		title string
		p     themes.Place
	}{{"lanes", themes.InLanes}, {"locks", themes.InLocks}, {"time axis ([ and ] jump)", themes.InAxis}, {"Redlock nodes", themes.InNodes}} {
		grp := LegendGroup{Title: g.title}
		for _, s := range themes.Legend(g.p) {
			grp.Entries = append(grp.Entries, th.Mark(s, 0)+" "+th.Muted.Render(themes.Table[s].Meaning))
		}
		out = append(out, grp)
	}
	return out
}

// LegendGroup is one group of the glyph legend.
type LegendGroup struct {
	Title   string
	Entries []string
}

// focusScroll is the first of n rows to show in avail rows (the last of
// them given to "↓ more" when rows are left below) so that rows lo…hi are
// in view; as far up as that allows.
func focusScroll(lo, hi, avail, n int) int {
	if n <= avail || lo < 0 {
		return 0
	}
	return min(max(hi-(avail-2), 0), lo, n-avail)
}
