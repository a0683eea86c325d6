// Package draw holds the view's pure widgets: boxes and fitting text to
// cells, the swimlanes and lock lanes, the stock gauge, the retry
// histogram, the wait-for graph and the log's tail. Each draws a
// timeline's state at a playhead into strings; none keeps state of its
// own or reads anything but what it is given.
package draw

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/locklab/locklab/themes"
)

// Box draws lines inside a rounded border of w×h cells with title in its
// top edge; lines are cut or padded to fit.
func Box(th *themes.Theme, title string, lines []string, w, h int) string {
	if w < 4 || h < 2 {
		return ""
	}
	inner := w - 2
	var b strings.Builder
	top := "─ " + title + " "
	if title == "" {
		top = ""
	}
	top = ansi.Truncate(top, inner, "")
	border := lookOf(th).border
	b.WriteString(border.wrap("╭" + top + strings.Repeat("─", inner-cellWidth(top)) + "╮"))
	side := border.wrap("│")
	for i := 0; i < h-2; i++ {
		b.WriteByte('\n')
		line := ""
		if i < len(lines) {
			line = Fit(lines[i], inner)
		} else {
			line = strings.Repeat(" ", inner)
		}
		b.WriteString(side + line + side)
	}
	b.WriteString("\n" + border.wrap("╰"+strings.Repeat("─", inner)+"╯"))
	return b.String()
}

// Fit cuts or pads a (styled) line to exactly w cells.
func Fit(s string, w int) string {
	n := cellWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

func AnsiWidth(s string) int { return cellWidth(s) }

// JoinH puts blocks side by side; every block must have the same height.
func JoinH(blocks ...string) string {
	split := make([][]string, len(blocks))
	rows := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		rows = max(rows, len(split[i]))
	}
	var out strings.Builder
	for r := 0; r < rows; r++ {
		if r > 0 {
			out.WriteByte('\n')
		}
		for _, s := range split {
			if r < len(s) {
				out.WriteString(s[r])
			}
		}
	}
	return out.String()
}

// Dur formats a virtual duration compactly: 850µs, 12.3ms, 4.21s.
func Dur(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + Dur(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}

// Scale maps virtual time onto cols columns, 0 at the left edge and span at
// the right.
type Scale struct {
	span time.Duration
	cols int
}

// NewScale is the scale of span over cols columns.
func NewScale(span time.Duration, cols int) Scale {
	return Scale{span: max(span, time.Millisecond), cols: max(cols, 1)}
}

// Cols is how many columns the scale spans.
func (s Scale) Cols() int { return s.cols }

// col is the column of time t.
func (s Scale) col(t time.Duration) int {
	c := int(int64(t) * int64(s.cols) / int64(s.span))
	return min(max(c, 0), s.cols-1)
}

// TooSmall says that a w×h window is smaller than the views need, in the
// longest wording that fits one line of w cells.
func TooSmall(th *themes.Theme, w, h int) string {
	for _, s := range []string{
		fmt.Sprintf("make the window at least %d×%d (it is %d×%d)", MinW, MinH, w, h),
		fmt.Sprintf("at least %d×%d, please (now %d×%d)", MinW, MinH, w, h),
		fmt.Sprintf("need %d×%d (is %d×%d)", MinW, MinH, w, h),
		fmt.Sprintf("need %d×%d", MinW, MinH),
		fmt.Sprintf("%d×%d", MinW, MinH),
	} {
		if cellWidth(s) <= w {
			return th.Warn.Render(s)
		}
	}
	return th.Warn.Render(strings.Repeat("…", max(min(w, 1), 0)))
}

// MinW and MinH are the smallest screen the views draw in; below it they
// say how much room they need.
const MinW, MinH = 80, 24
