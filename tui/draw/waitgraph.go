package draw

import (
	"fmt"
	"sort"
	"strings"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// WaitGraph renders who waits for whom at cursor k. A cycle is drawn as a
// ring, in the alarm style, from the moment it closes.
func WaitGraph(th *themes.Theme, tl *timeline.Timeline, k, width, rows int) []string {
	waits := tl.WaitsAt(k)
	if cyc := timeline.Cycle(waits); cyc != nil {
		return ring(th, cyc, width)
	}
	by := map[int32][]int32{}
	for from, to := range waits {
		if to >= 0 {
			by[to] = append(by[to], int32(from))
		}
	}
	if len(by) == 0 {
		return []string{th.Muted.Render("nobody waits for anybody")}
	}
	targets := make([]int32, 0, len(by))
	for t := range by {
		targets = append(targets, t)
	}
	sort.Slice(targets, func(i, j int) bool {
		return len(by[targets[i]]) > len(by[targets[j]]) || (len(by[targets[i]]) == len(by[targets[j]]) && targets[i] < targets[j])
	})
	var out []string
	for _, t := range targets {
		if len(out) >= rows {
			break
		}
		line := th.Worker(int(t)).Render(check.WorkerName(t)) + th.Muted.Render(" ◀ ")
		ws := by[t]
		shown := 0
		for _, w := range ws {
			name := check.WorkerName(w)
			if AnsiWidth(line)+len(name)+8 > width {
				break
			}
			line += th.Worker(int(w)).Render(name) + " "
			shown++
		}
		if shown < len(ws) {
			line += th.Muted.Render(fmt.Sprintf("+%d", len(ws)-shown))
		}
		out = append(out, line)
	}
	return out
}

// ring draws a wait-for cycle as a cycle:
//
//	┌▶ w00 ─▶ w01 ─┐
//	└──────────────┘  DEADLOCK
func ring(th *themes.Theme, cyc []int32, width int) []string {
	var names []string
	for _, w := range cyc {
		names = append(names, check.WorkerName(w))
	}
	body := strings.Join(names, " ─▶ ")
	top := "┌▶ " + body + " ─┐"
	if len([]rune(top)) > width {
		top = "┌▶ " + fmt.Sprintf("%d-cycle: %s", len(cyc), body)
	}
	n := len([]rune(top)) - 2
	bottom := "└" + strings.Repeat("─", max(n, 0)) + "┘"
	return []string{th.Alarm.Render(top), th.Alarm.Render(bottom), th.Alarm.Render(fmt.Sprintf("DEADLOCK: %d workers wait in a circle", len(cyc)))}
}
