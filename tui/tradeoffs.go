package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// tradeCache is the trade-offs table folded up to an event, so a frame
// folds only the events since the last one (or starts over when the
// playhead went back).
type tradeCache struct {
	table *scenario.TradeTable
	upTo  int // events folded
}

// tradeTable is the trade-offs panel: the lab's table, one line per store,
// as of event k: how long the waiter was kept out after the crash or the
// pause, and where the stale write went. pad lines the cells up.
func (v *runView) tradeTable(th *themes.Theme, k int, now time.Duration, pad bool) []string {
	c := &v.trade
	if c.table == nil || k+1 < c.upTo {
		c.table, c.upTo = scenario.NewTradeTable(v.s.header), 0
	}
	for ; c.upTo <= k && c.upTo < v.s.log.Len(); c.upTo++ {
		e := v.s.log.At(c.upTo)
		c.table.Add(&e)
	}
	pause := v.s.header.Strategy == "pause"
	out := make([]string, 0, 3)
	for _, r := range c.table.Rows() {
		name := r.Store + " "
		if pad {
			name = fmt.Sprintf("%-9s", r.Store)
		}
		out = append(out, th.Text.Render(name)+tradeCell(th, r, pause, now))
	}
	return out
}

// tradeCell is one store's outcome so far.
func tradeCell(th *themes.Theme, r scenario.TradeRow, pause bool, now time.Duration) string {
	switch {
	case r.Missing != "":
		_, why, _ := strings.Cut(r.Missing, ": pass ")
		if flag, _, ok := strings.Cut(why, " or "); ok {
			return th.Muted.Render("needs " + flag)
		}
		return th.Muted.Render("not in this build")
	case r.Fault < 0:
		return th.Muted.Render("—")
	case r.In < 0:
		return th.Warn.Render("kept out " + span(now-r.Fault) + "…")
	}
	kept := span(r.In - r.Fault)
	if !pause {
		return th.Text.Render("kept out " + kept)
	}
	switch {
	case r.Landed > 0:
		return th.Alarm.Render("in after " + kept + ": STALE WRITE")
	case r.Rejected > 0:
		return th.OK.Render("in after " + kept + ": fenced")
	case r.In-r.Fault >= 0 && r.Overlaps == 0:
		return th.OK.Render("waited " + kept + ": safe")
	}
	return th.Warn.Render("in after " + kept)
}

// span is a duration as a few characters: 1.01s, 3ms.
func span(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}
