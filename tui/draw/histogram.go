package draw

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// DelayBins are the retry-delay histogram's bins, the tally's: log-spaced,
// doubling from 100ms both ways, so a fixed delay is one bar, exponential
// backoff's doubling is one bar per step and jitter spreads over several.
// Each is labelled by its range.
var DelayBins = func() (bins []struct{ Label string }) {
	for i := range check.RetryBinCount {
		lo, hi := check.RetryBinRange(i)
		label := "≥" + short(lo)
		if hi > 0 {
			label = rangeLabel(lo, hi)
		}
		bins = append(bins, struct{ Label string }{label})
	}
	return bins
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

// HistCache keeps the last drawn chart: it is drawn again only when a
// bar's count, the bins, the size or the theme change.
type HistCache struct {
	key   string
	chart []string
}

// RetryCounts are the tally's backoffs per bin, their number and mean.
func RetryCounts(t *check.Tally) (counts []int, n int, mean time.Duration) {
	counts = make([]int, check.RetryBinCount)
	for i := range counts {
		counts[i] = t.RetryBin(i)
	}
	return counts, t.Get(check.NRetries), t.RetryMean()
}

// Histogram renders the retry-delay histogram (ntcharts) for the backoffs
// up to cursor k.
func Histogram(hc *HistCache, th *themes.Theme, tl *timeline.Timeline, k, width, height int) []string {
	if height < 3 || width < 10 {
		return nil
	}
	t := tl.TallyAt(k)
	counts, n, mean := RetryCounts(&t)
	if n == 0 {
		return []string{th.Muted.Render("no retries yet"), th.Muted.Render("(--retry sets a policy)")}
	}
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
	caption := th.Muted.Render(fmt.Sprintf("%d retries, mean %s", n, Dur(mean)))
	peak := 1
	for _, c := range counts[first : last+1] {
		peak = max(peak, c)
	}
	key := fmt.Sprint(th.Name, width, height, first, last)
	for _, c := range counts[first : last+1] {
		key += "," + strconv.Itoa(c) // the count is drawn beside its bar
	}
	if key == hc.key {
		return append([]string{caption}, hc.chart...)
	}
	// One row per bin: its range, a bar, the count.
	labelW := 0
	for _, b := range DelayBins[first : last+1] {
		labelW = max(labelW, len([]rune(b.Label)))
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
		label := fmt.Sprintf("%*s ", labelW, DelayBins[i].Label)
		row := th.Muted.Render(label) + lk.states[themes.Waiting].wrap(bar)
		if n > 0 {
			row += " " + th.Text.Render(strconv.Itoa(n))
		}
		rowsOut = append(rowsOut, row)
	}
	hc.key, hc.chart = key, rowsOut
	return append([]string{caption}, hc.chart...)
}
