package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// Lock lane glyphs.
const (
	glyphHeld    = '━'
	glyphRenewal = '┿'
	glyphLapse   = '✖'
	glyphExpired = '×'
	glyphForeign = '⊘'
	glyphRefused = '!'
)

// lockLanes renders one row per lock key: its holder over time (in the
// holder's colour), renewal ticks, a mark where a TTL lapsed under a
// working holder, then who holds it now and a TTL countdown bar.
// Each lock takes two rows; its columns line up with the swimlanes'.
func lockLanes(th *themes.Theme, tl *timeline.Timeline, k int, now time.Duration, width, labelW, rows int) []string {
	var out []string
	cols := max(width-labelW-1, 1)
	sc := newScale(now, cols)
	for _, l := range tl.Locks {
		if len(out)+2 > rows {
			break
		}
		spans, marks := tl.LockAt(l, k)
		cells := make([]string, cols)
		holders := make([]int32, cols)
		for c := range holders {
			holders[c] = -1
		}
		var cur timeline.LockSpan
		cur.Holder = -1
		for i, sp := range spans {
			if sp.T > now {
				break
			}
			end := now
			if i+1 < len(spans) && spans[i+1].T <= now {
				end = spans[i+1].T
			}
			if sp.Holder >= 0 && sp.TTL > 0 && sp.Deadline < end {
				end = sp.Deadline // lapsed before anything said so
			}
			cur = sp
			if sp.Holder < 0 {
				continue
			}
			for c := sc.col(sp.T); c <= sc.col(end); c++ {
				holders[c] = sp.Holder
			}
		}
		for c, h := range holders {
			if h >= 0 {
				cells[c] = th.Worker(int(h)).Render(string(glyphHeld))
			} else {
				cells[c] = " "
			}
		}
		for _, m := range marks {
			if m.T > now {
				continue
			}
			c := sc.col(m.T)
			switch m.Kind {
			case timeline.MarkRenewal:
				cells[c] = th.Renewal.Render(string(glyphRenewal))
			case timeline.MarkLapse:
				cells[c] = th.Lapse.Render(string(glyphLapse))
			case timeline.MarkExpired:
				cells[c] = th.Warn.Render(string(glyphExpired))
			case timeline.MarkForeignDelete:
				cells[c] = th.Alarm.Render(string(glyphForeign))
			case timeline.MarkReleaseFailed, timeline.MarkLost:
				cells[c] = th.Warn.Render(string(glyphRefused))
			}
		}
		info := th.Muted.Render("free")
		if cur.Holder >= 0 {
			info = holderInfo(th, tl, k, cur, now, sc, cells)
		}
		out = append(out, th.Text.Render(fmt.Sprintf("%-*s", labelW, shortLock(l.Name, labelW)))+" "+strings.Join(cells, ""),
			strings.Repeat(" ", labelW+1)+th.Muted.Render(l.Name+": ")+info)
	}
	if hidden := len(tl.Locks) - len(out)/2; hidden > 0 && len(out) > 0 {
		out[len(out)-1] += th.Muted.Render(fmt.Sprintf("  (+%d more locks)", hidden))
	}
	return out
}

// labelWidth is the width of the lane labels, shared by workers and locks;
// folded lanes carry their count ("w03×12").
func labelWidth(tl *timeline.Timeline, laneRows int) int {
	w := 4
	if len(tl.Workers) > 100 {
		w = 5
	}
	if len(tl.Workers) > laneRows {
		w += 1 + len(fmt.Sprint(len(tl.Workers)))
	}
	for _, l := range tl.Locks {
		w = max(w, min(len(strings.TrimPrefix(l.Name, "lock:")), 10))
	}
	return w
}

// holderInfo is "w03 ▕████░░░░▏ 1.20s", or the lapse under a working holder.
func holderInfo(th *themes.Theme, tl *timeline.Timeline, k int, sp timeline.LockSpan, now time.Duration, sc scale, cells []string) string {
	who := th.Worker(int(sp.Holder)).Render(scenario.WorkerName(sp.Holder))
	if sp.TTL <= 0 {
		return who + th.Alarm.Render(" no TTL!")
	}
	left := sp.Deadline - now
	if left <= 0 {
		if int(sp.Holder) < len(tl.Workers) && tl.StateAt(int(sp.Holder), k) == themes.Critical {
			cells[sc.col(sp.Deadline)] = th.Lapse.Render(string(glyphLapse))
			return who + " " + th.Lapse.Render("TTL LAPSED, still working")
		}
		return who + " " + th.Warn.Render("expired")
	}
	const barW = 10
	filled := int(int64(barW) * int64(left) / int64(sp.TTL))
	filled = min(max(filled, 0), barW)
	bar := th.States[themes.Holding].Render(strings.Repeat("█", filled)) + th.Muted.Render(strings.Repeat("░", barW-filled))
	fence := ""
	if sp.Fence > 0 {
		fence = th.Muted.Render(fmt.Sprintf(" #%d", sp.Fence))
	}
	return who + " " + bar + " " + dur(left) + fence
}

// shortLock trims a lock key for the label column: lock:stock → stock.
func shortLock(name string, w int) string {
	name = strings.TrimPrefix(name, "lock:")
	if len(name) > w {
		return name[:w]
	}
	return name
}
