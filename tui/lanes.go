package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// blank is a lane cell before a worker starts or after it is done.
const blank = themes.StateCount

// prio decides which state a column shows when several fall in it: the
// short, telling ones win.
var prio = [themes.StateCount + 1]int{
	blank: 0, themes.Idle: 1, themes.Waiting: 2, themes.Attempting: 3, themes.Holding: 4,
	themes.Paused: 5, themes.Critical: 6, themes.DoneOK: 7, themes.DoneFail: 7,
}

// laneCells computes worker w's cells at cursor k up to time now.
func laneCells(dst []themes.State, tl *timeline.Timeline, w, k int, sc scale, now time.Duration) []themes.State {
	dst = dst[:0]
	for range sc.cols {
		dst = append(dst, blank)
	}
	spans := tl.SpansAt(w, k)
	last := sc.col(now)
	for i, sp := range spans {
		if sp.T > now {
			break
		}
		start := sc.col(sp.T)
		end := last
		if i+1 < len(spans) && spans[i+1].T <= now {
			end = sc.col(spans[i+1].T)
		}
		if sp.State == themes.DoneOK || sp.State == themes.DoneFail {
			end = start
		}
		for c := start; c <= end; c++ {
			if prio[sp.State] >= prio[dst[c]] {
				dst[c] = sp.State
			}
		}
	}
	return dst
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

// lanes renders the swimlanes box content: one row per worker (identical
// rows folded together when they do not fit), then the time axis.
func lanes(th *themes.Theme, tl *timeline.Timeline, k int, now time.Duration, width, labelW, rows, scroll int) []string {
	if rows < 2 {
		return nil
	}
	workers := len(tl.Workers)
	cols := max(width-labelW-1, 1)
	sc := newScale(now, cols)
	type group struct {
		first, count int
		cells        []themes.State
	}
	var groups []group
	index := map[string]int{}
	fold := workers > rows-1
	var buf []themes.State
	for w := 0; w < workers; w++ {
		buf = laneCells(buf, tl, w, k, sc, now)
		if fold {
			key := string(statesKey(buf))
			if g, ok := index[key]; ok {
				groups[g].count++
				continue
			}
			index[key] = len(groups)
		}
		groups = append(groups, group{first: w, count: 1, cells: append([]themes.State(nil), buf...)})
	}
	avail := rows - 1
	scroll = min(scroll, max(len(groups)-avail, 0))
	lk := lookOf(th)
	var out []string
	var b strings.Builder
	for i := scroll; i < len(groups) && len(out) < avail; i++ {
		g := groups[i]
		b.Reset()
		name := scenario.WorkerName(int32(g.first))
		b.WriteString(lk.worker(g.first).wrap(name))
		if g.count > 1 {
			count := fmt.Sprintf("×%d", g.count)
			b.WriteString(th.Muted.Render(count))
			name += count
		}
		b.WriteString(strings.Repeat(" ", max(labelW-len([]rune(name)), 0)+1))
		renderCells(lk, &b, g.cells)
		out = append(out, b.String())
	}
	if hidden := len(groups) - scroll - len(out); hidden > 0 && len(out) > 0 {
		out[len(out)-1] = th.Muted.Render(fmt.Sprintf("  ↓ %d more (↑/↓ to scroll)", hidden))
	}
	for len(out) < avail {
		out = append(out, "")
	}
	return append(out, axis(th, labelW+1, cols, now, tl.MarkersAt(k)))
}

func statesKey(cells []themes.State) []byte {
	b := make([]byte, len(cells))
	for i, c := range cells {
		b[i] = byte(c)
	}
	return b
}

// markerGlyphs mark the timeline's markers on the axis; a violation wins
// a column over the others.
var markerGlyphs = map[timeline.MarkerKind]rune{
	timeline.MarkerViolation: '✖', timeline.MarkerExpiry: '×', timeline.MarkerDeadlock: '↻',
	timeline.MarkerCrash: '†', timeline.MarkerBeat: '◆',
}

// axis is the time axis under the lanes: 0 on the left, now on the right,
// and a glyph where each marker is ([ and ] jump between them).
func axis(th *themes.Theme, indent, cols int, now time.Duration, marks []timeline.Marker) string {
	right := dur(now)
	mid := dur(now / 2)
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
	if len(marks) == 0 || len(r) == 0 {
		return strings.Repeat(" ", indent) + th.Muted.Render(string(r))
	}
	at := make([]timeline.MarkerKind, len(r))
	sc := newScale(now, len(r))
	for _, m := range marks {
		// The nearest line cell at or left of the marker's column: the
		// labels stay legible.
		c := sc.col(m.T)
		for c > 0 && r[c] != '─' && at[c] == 0 {
			c--
		}
		if r[c] == '─' && at[c] != timeline.MarkerViolation {
			at[c] = m.Kind
		}
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", indent))
	for i := 0; i < len(r); {
		j := i
		for j < len(r) && at[j] == 0 {
			j++
		}
		b.WriteString(th.Muted.Render(string(r[i:j])))
		if j < len(r) {
			style := th.Accent
			if at[j] == timeline.MarkerViolation {
				style = th.Alarm
			}
			b.WriteString(style.Render(string(markerGlyphs[at[j]])))
			j++
		}
		i = j
	}
	return b.String()
}

// legend names every lane glyph.
func legend(th *themes.Theme) string {
	var parts []string
	for s := themes.Idle; s < themes.StateCount; s++ {
		parts = append(parts, th.Cell(s, 1)+" "+th.Muted.Render(s.String()))
	}
	return strings.Join(parts, "  ")
}
