package tui

import (
	"fmt"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/workshop"
)

// scoreRows is the most attendees the scoreboard shows at once.
const scoreRows = 6

// scoreboard is one line per attendee — what its workers did in the
// scenario's terms (buys, credits, jobs run…), denials, violations, state —
// folded from the events up to the view's cursor, so it rewinds with it.
func (v *HostView) scoreboard(th *themes.Theme) []string {
	k := min(v.run.cursor, v.run.tl.N-1)
	return scoreLines(th, v.run.shared.scoresAt(k), scenario.ScoreTerm(v.run.s.header.Scenario), v.w, v.me)
}

// scoreLines draws a scoreboard in the lanes' order; term names what
// Score.Did counts; me's line (a participant's own) is marked.
func scoreLines(th *themes.Theme, scores []scenario.Score, term string, w int, me string) []string {
	dw := max(len(term), 5)
	head := fmt.Sprintf(" %-16s %7s %*s %7s %10s  %s", "attendee", "workers", dw, term, "denied", "violations", "state")
	out := []string{th.Title.Render(draw.Fit(" scoreboard", w)), th.Muted.Render(draw.Fit(head, w))}
	for i, s := range scores {
		if i == scoreRows-1 && len(scores) > scoreRows {
			out = append(out, th.Muted.Render(fmt.Sprintf(" … and %d more", len(scores)-i)))
			break
		}
		state, style := "racing", th.Text
		switch {
		case s.Gone:
			state, style = "✗ disconnected", th.Alarm
		case s.Done == s.Workers:
			state = "✓ done"
		}
		viol := th.Text.Render(fmt.Sprintf("%10d", s.Violations))
		if s.Violations > 0 {
			viol = th.Alarm.Render(fmt.Sprintf("%10d", s.Violations))
		}
		mark := " "
		if s.Name == me && me != "" {
			mark = th.Accent.Render(ownMark)
		}
		line := fmt.Sprintf("%s%-16s %7d %*d %7d ", mark, truncName(s.Name, 16), s.Workers, dw, s.Did, s.Denials) + viol + "  " + style.Render(state)
		out = append(out, draw.Fit(line, w))
	}
	return out
}

func truncName(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// leaderboard is the room's standings over its finished rounds, in the
// scoreboard's place.
func (v *HostView) leaderboard(th *themes.Theme) []string {
	runs := v.stage.Runs()
	st := workshop.Leaderboard(runs, v.stage.Renames())
	n := 0
	for _, r := range runs {
		select {
		case <-r.Done():
			n++
		default:
		}
	}
	out := []string{th.Title.Render(draw.Fit(fmt.Sprintf(" leaderboard after %d round(s) · l: this round's scoreboard", n), v.w)),
		th.Muted.Render(draw.Fit(fmt.Sprintf(" %3s %-16s %6s %7s %7s %10s", "#", "participant", "rounds", "done", "denied", "violations"), v.w))}
	for i, s := range st {
		if i == scoreRows-1 && len(st) > scoreRows {
			out = append(out, th.Muted.Render(fmt.Sprintf(" … and %d more", len(st)-i)))
			break
		}
		mark := " "
		if s.Name == v.me && v.me != "" {
			mark = th.Accent.Render(ownMark)
		}
		out = append(out, draw.Fit(fmt.Sprintf("%s%3d %-16s %6d %7d %7d %10d", mark, i+1, truncName(s.Name, 16), s.Rounds, s.Did, s.Denials, s.Violations), v.w))
	}
	return out
}
