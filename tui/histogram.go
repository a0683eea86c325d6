package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// delayBins are the retry-delay histogram's bins: log-spaced, doubling
// from 100ms both ways, so a fixed delay is one bar, exponential backoff's
// doubling is one bar per step and jitter spreads over several. Each is
// labelled by its range.
var delayBins = func() (bins []struct {
	upTo  time.Duration
	label string
}) {
	edges := []time.Duration{0}
	for e := 100 * time.Millisecond >> 7; e <= 100*time.Millisecond<<7; e *= 2 {
		edges = append(edges, e)
	}
	for i := 1; i < len(edges); i++ {
		bins = append(bins, struct {
			upTo  time.Duration
			label string
		}{edges[i], rangeLabel(edges[i-1], edges[i])})
	}
	return append(bins, struct {
		upTo  time.Duration
		label string
	}{1 << 62, "≥" + short(edges[len(edges)-1])})
}()

// rangeLabel is "100–200ms", "800ms–1.6s", "<781µs".
func rangeLabel(lo, hi time.Duration) string {
	if lo == 0 {
		return "<" + short(hi)
	}
	l, h := short(lo), short(hi)
	ul, uh := strings.TrimLeft(l, "0123456789."), strings.TrimLeft(h, "0123456789.")
	if ul == uh {
		l = strings.TrimSuffix(l, ul)
	}
	return l + "–" + h
}

// short is a duration in at most three significant digits: 781µs, 12.5ms, 1.6s.
func short(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d.Nanoseconds())/1e3, 'g', 3, 64) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d.Nanoseconds())/1e6, 'g', 3, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'g', 3, 64) + "s"
}

// binOf is the bin of delay d.
func binOf(d time.Duration) int {
	return sort.Search(len(delayBins)-1, func(i int) bool { return d < delayBins[i].upTo })
}

// histCache keeps the last drawn chart: it is drawn again only when a bar's
// visible height (in eighths of a cell), the bins, the size or the theme
// change.
type histCache struct {
	key   string
	chart []string
	// Bin counts of the first n backoffs, kept as the cursor moves on.
	n      int
	counts []int
	total  time.Duration
}

// tally brings the counts to the first len(delays) backoffs.
func (hc *histCache) tally(delays []timeline.Delay) {
	if len(delays) < hc.n || hc.counts == nil {
		hc.n, hc.total, hc.counts = 0, 0, make([]int, len(delayBins))
	}
	for _, d := range delays[hc.n:] {
		hc.total += d.Delay
		hc.counts[binOf(d.Delay)]++
	}
	hc.n = len(delays)
}

// histogram renders the retry-delay histogram (ntcharts) for the backoffs
// up to cursor k.
func histogram(hc *histCache, th *themes.Theme, tl *timeline.Timeline, k, width, height int) []string {
	delays := tl.BackoffsAt(k)
	if height < 3 || width < 10 {
		return nil
	}
	if len(delays) == 0 {
		return []string{th.Muted.Render("no retries yet"), th.Muted.Render("(--retry sets a policy)")}
	}
	hc.tally(delays)
	counts, total := hc.counts, hc.total
	first, last := len(counts), -1
	for i, c := range counts {
		if c > 0 {
			first, last = min(first, i), i
		}
	}
	// Show the populated range, widened to at least three bins, one row each.
	rows := height - 1
	for last-first+1 < min(3, rows) {
		if first > 0 {
			first--
		} else if last < len(counts)-1 {
			last++
		} else {
			break
		}
	}
	for last-first+1 > rows { // too many to show: keep the busiest end
		if counts[first] <= counts[last] {
			first++
		} else {
			last--
		}
	}
	caption := th.Muted.Render(fmt.Sprintf("%d retries, mean %s", len(delays), dur(total/time.Duration(len(delays)))))
	peak := 1
	for _, c := range counts[first : last+1] {
		peak = max(peak, c)
	}
	key := fmt.Sprint(th.Name, width, height, first, last)
	for _, c := range counts[first : last+1] {
		key += "," + strconv.Itoa(c*width*8/peak)
	}
	if key == hc.key {
		return append([]string{caption}, hc.chart...)
	}
	// One row per bin: its range, a bar, the count.
	labelW := 0
	for _, b := range delayBins[first : last+1] {
		labelW = max(labelW, len([]rune(b.label)))
	}
	barW := max(width-labelW-2-len(strconv.Itoa(peak))-1, 1)
	lk := lookOf(th)
	var rowsOut []string
	for i := first; i <= last; i++ {
		n := counts[i]
		cells := (n*barW*8 + peak - 1) / peak // eighths, rounded up: a count is never invisible
		bar := strings.Repeat("█", cells/8)
		if r := cells % 8; r > 0 {
			bar += string([]rune(" ▏▎▍▌▋▊▉")[r])
		}
		label := fmt.Sprintf("%*s ", labelW, delayBins[i].label)
		row := th.Muted.Render(label) + lk.states[themes.Waiting].wrap(bar)
		if n > 0 {
			row += " " + th.Text.Render(strconv.Itoa(n))
		}
		rowsOut = append(rowsOut, row)
	}
	hc.key, hc.chart = key, rowsOut
	return append([]string{caption}, hc.chart...)
}
