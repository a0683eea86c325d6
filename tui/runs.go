package tui

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// periodRuns is cron's panel: how many times the period's job ran, against
// the once allowed, and by whom.
func periodRuns(th *themes.Theme, tl *timeline.Timeline, k int) []string {
	applied := tl.AppliedAt(k)
	n := len(applied)
	count, tag := th.Text.Render(fmt.Sprint(n)), th.Muted.Render("not run yet")
	switch {
	case n == 1:
		tag = th.OK.Render("once: ok")
	case n == 2:
		count, tag = th.Alarm.Render("2"), th.Alarm.Render("RAN TWICE")
	case n > 2:
		count, tag = th.Alarm.Render(fmt.Sprint(n)), th.Alarm.Render(fmt.Sprintf("RAN %d TIMES", n))
	}
	out := []string{th.Text.Render("ran ") + count + th.Text.Render(" of 1 allowed"), tag}
	if n > 0 {
		who := make([]string, n)
		for i, a := range applied {
			who[i] = check.WorkerName(a.Worker)
		}
		out = append(out, th.Muted.Render("by "+strings.Join(who, ", ")))
	}
	return out
}
