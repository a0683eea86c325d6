package tui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/NimbleMarkets/ntcharts/barchart"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// delayBins are the retry-delay histogram's upper bounds (log-spaced).
var delayBins = []struct {
	upTo  time.Duration
	label string
}{
	{time.Millisecond, "<1"}, {2 * time.Millisecond, "2"}, {5 * time.Millisecond, "5"},
	{10 * time.Millisecond, "10"}, {20 * time.Millisecond, "20"}, {50 * time.Millisecond, "50"},
	{100 * time.Millisecond, "100"}, {200 * time.Millisecond, "200"}, {500 * time.Millisecond, "500"},
	{time.Second, "1s"}, {2 * time.Second, "2s"}, {1 << 62, ">2s"},
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
		for i, b := range delayBins {
			if d.Delay < b.upTo {
				hc.counts[i]++
				break
			}
		}
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
	// Show the populated range, widened to at least four bins.
	for last-first+1 < 4 {
		if first > 0 {
			first--
		} else if last < len(counts)-1 {
			last++
		} else {
			break
		}
	}
	caption := th.Muted.Render(fmt.Sprintf("%d retries, mean %s; bins in ms", len(delays), dur(total/time.Duration(len(delays)))))
	peak := 1
	for _, c := range counts[first : last+1] {
		peak = max(peak, c)
	}
	key := fmt.Sprint(th.Name, width, height, first, last)
	for _, c := range counts[first : last+1] {
		key += "," + strconv.Itoa(c*(height-2)*8/peak)
	}
	if key == hc.key {
		return append([]string{caption}, hc.chart...)
	}
	style := th.States[themes.Waiting]
	var data []barchart.BarData
	for i := first; i <= last; i++ {
		data = append(data, barchart.BarData{Label: delayBins[i].label,
			Values: []barchart.BarValue{{Name: delayBins[i].label, Value: float64(counts[i]), Style: style}}})
	}
	chart := barchart.New(width, height-1, barchart.WithStyles(th.Muted, th.Muted), barchart.WithBarGap(1))
	chart.PushAll(data)
	chart.Draw()
	hc.key, hc.chart = key, splitLines(chart.View())
	return append([]string{caption}, hc.chart...)
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
