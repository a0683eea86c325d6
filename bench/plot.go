package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/linechart"
)

// marks are the series' markers on the plot: the ceiling is S, the
// strategies a, b, c, … in the order of the report, so the plot reads the
// same without colour.
const marks = "abcdefghijklmnopqrstuvwxyz0123456789"

// Plot draws cycles/s (log scale) against workers for the ceiling and every
// strategy on the plain client (ntcharts line chart), width × height cells,
// with its legend below.
func (r *Report) Plot(width, height int) string {
	all := r.plotted()
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range all {
		for _, c := range s.Cells {
			if c.PerSec > 0 {
				lo, hi = min(lo, c.PerSec), max(hi, c.PerSec)
			}
		}
	}
	if len(r.Workers) == 0 || math.IsInf(lo, 0) {
		return ""
	}
	minY, maxY := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if maxY <= minY {
		maxY = minY + 1
	}
	maxX := float64(max(len(r.Workers)-1, 1))
	lc := linechart.New(width, height, 0, maxX, minY, maxY,
		linechart.WithXYSteps(1, 2),
		linechart.WithXLabelFormatter(func(int, float64) string { return "" }),
		linechart.WithYLabelFormatter(func(_ int, v float64) string { return rate2(math.Pow(10, v)) }))
	lc.DrawXYAxisAndLabel()
	point := func(i int, v float64) canvas.Float64Point {
		return canvas.Float64Point{X: float64(i), Y: math.Log10(v)}
	}
	// Lines first, markers over them.
	for _, s := range all {
		for i := 1; i < len(s.Cells); i++ {
			a, b := s.Cells[i-1].PerSec, s.Cells[i].PerSec
			if a > 0 && b > 0 {
				lc.DrawRuneLine(point(i-1, a), point(i, b), '·')
			}
		}
	}
	for k, s := range all {
		for i, c := range s.Cells {
			if c.PerSec > 0 {
				lc.DrawRune(point(i, c.PerSec), mark(k))
			}
		}
	}
	// The worker counts under their columns.
	o := lc.Origin()
	for i, n := range r.Workers {
		p := lc.ScaleFloat64Point(canvas.Float64Point{X: float64(i)})
		label := strconv.Itoa(n)
		x := min(max(o.X+1+int(math.Round(p.X))-len(label)/2, o.X+1), width-len(label))
		lc.Canvas.SetStringWithStyle(canvas.Point{X: x, Y: o.Y + 1}, label, lc.LabelStyle)
	}
	var b strings.Builder
	b.WriteString("cycles/s by concurrent workers (log scale; plain client)\n")
	b.WriteString(lc.View())
	b.WriteString("\n")
	b.WriteString(legend(all, width))
	return b.String()
}

// plotted are the series the plot draws: the Redis SET ceiling first (an
// empty series in its place when there is none), then each strategy
// through the plain client.
func (r *Report) plotted() []Series {
	var all []Series
	for _, c := range r.Ceilings {
		if c.Name == "redis SET" {
			all = append(all, c)
		}
	}
	if len(all) == 0 {
		all = append(all, Series{})
	}
	for _, s := range r.Results {
		if !strings.HasSuffix(s.Name, AutoPipelined) {
			all = append(all, s)
		}
	}
	return all
}

// legend names each plotted series beside its mark, wrapped at width.
func legend(all []Series, width int) string {
	var b strings.Builder
	line := ""
	for k, s := range all {
		name := s.Name
		if k == 0 {
			if len(s.Cells) == 0 {
				continue
			}
			name = "redis SET ceiling"
		}
		item := fmt.Sprintf("%c %s", mark(k), name)
		if line != "" && len([]rune(line))+2+len([]rune(item)) > width {
			b.WriteString(line + "\n")
			line = ""
		}
		if line != "" {
			line += "  "
		}
		line += item
	}
	b.WriteString(line + "\n")
	return b.String()
}

// mark is series k's marker.
func mark(k int) rune {
	if k == 0 {
		return 'S'
	}
	return rune(marks[(k-1)%len(marks)])
}

// rate2 is an axis label: a rate in at most two significant digits.
func rate2(v float64) string {
	f := func(x float64, unit string) string {
		if x >= 10 {
			return strconv.FormatFloat(math.Round(x), 'f', 0, 64) + unit
		}
		return strconv.FormatFloat(x, 'g', 2, 64) + unit
	}
	switch {
	case v >= 1e6:
		return f(v/1e6, "M")
	case v >= 1e3:
		return f(v/1e3, "k")
	}
	return f(v, "")
}
