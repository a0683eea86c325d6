package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/tui/draw"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// Layout thresholds.
const (
	minW, minH   = draw.MinW, draw.MinH
	fullW, fullH = 120, 36
	rightW       = 44
)

// renderCache keeps the last frame: nothing is drawn twice for the same
// cursor, time, size and theme.
type renderCache struct {
	key  frameKey
	view string
}

type frameKey struct {
	k, n, w, h, scroll int
	now                time.Duration
	theme, mode, note  string
	speed              float64
	present            [2]bool
	loading            bool // a replay still being read
	sched              string
}

// View draws the run view in w×h cells.
func (v *runView) View(th *themes.Theme, w, h int) string {
	k, now := v.cursor, v.now()
	key := frameKey{k: k, n: v.tl.N, w: w, h: h, scroll: v.scroll, now: now, theme: th.Name, mode: v.mode(), note: v.status, speed: v.speed, present: [2]bool{v.pr.on, v.pr.waiting}, loading: v.s.loading != nil, sched: v.schedKey()}
	if key == v.cache.key && v.cache.view != "" {
		return v.cache.view
	}
	view := v.render(th, k, now, w, h)
	v.cache = renderCache{key: key, view: view}
	return view
}

// redlockKeysNote says what Redlock's keys, named by letter, are; empty
// when there are none.
func (v *runView) redlockKeysNote(th *themes.Theme) string {
	if len(v.tl.Locks) == 0 {
		return ""
	}
	var names []string
	for _, l := range v.tl.Locks {
		names = append(names, strings.TrimPrefix(l.Name, "lock:"))
	}
	return th.Muted.Render(fmt.Sprintf("%s: one Redlock key per part of the story, each on all %d nodes", strings.Join(names, " "), len(v.tl.NodesAt(v.tl.N-1))))
}

func (v *runView) render(th *themes.Theme, k int, now time.Duration, w, h int) string {
	if v.pr.on {
		return v.pr.render(th, k, now, w, h)
	}
	full := w >= fullW && h >= fullH-1 // h excludes the footer
	verdict := v.verdict(th, k, w)
	logN := 3
	if full {
		logN = min(6+(h-fullH)/4, 12)
	}
	bodyH := h - 1 - len(verdict) - logN - 1 - v.schedRows()
	lockRows := min(2*len(v.tl.Locks), 8)
	nodes := v.s.header.Scenario == "redlock" && slices.Contains(panelsOf(v.s.header, v.tl), panelNodes)
	netted := len(v.tl.NetsAt(k)) > 0 // network faults in force: the node rows show them
	var lockNote string
	if nodes {
		lockNote = v.redlockKeysNote(th)
	}
	lockH := 0
	if lockRows > 0 {
		lockH = lockRows + 2
		if lockNote != "" {
			lockH++
		}
	}
	lockBox := func(w, labelW int) string {
		lines := draw.LockLanes(th, v.tl, k, now, w-2, labelW, lockRows)
		if lockNote != "" {
			lines = append([]string{lockNote}, lines...)
		}
		return draw.Box(th, "locks", lines, w, lockH)
	}
	var body string
	if full {
		leftW := w - rightW
		laneH := bodyH - lockH
		labelW := draw.LabelWidth(v.tl, laneH-3)
		left := draw.Box(th, "swimlanes", draw.LanesFocus(th, v.tl, k, now, now, leftW-2, labelW, laneH-2, v.scroll, v.own), leftW, laneH)
		if lockH > 0 {
			left += "\n" + lockBox(leftW, labelW)
		}
		body = draw.JoinH(left, v.rightColumn(th, k, now, rightW, bodyH))
	} else {
		var nodeBox string
		if nodes || netted {
			// Small screens: the nodes say more than the per-key lanes.
			rows := nodeRows(th, v.tl, k, now, w-2)
			nodeBox = draw.Box(th, "nodes", rows, w, len(rows)+2)
			lockH = len(rows) + 1 // its box, with the panel line dropped
		}
		laneH := bodyH - lockH - 1
		labelW := draw.LabelWidth(v.tl, laneH-3)
		body = draw.Box(th, "swimlanes", draw.LanesFocus(th, v.tl, k, now, now, w-2, labelW, laneH-2, v.scroll, v.own), w, laneH)
		switch {
		case nodeBox != "":
			body += "\n" + nodeBox
		case lockH > 0:
			body += "\n" + lockBox(w, labelW)
		}
		if nodeBox == "" {
			body += "\n" + draw.Fit(v.panelLine(th, k, now, w), w)
		}
	}
	var b strings.Builder
	b.WriteString(draw.Fit(v.header(th, k, now, w), w))
	b.WriteString("\n" + body)
	if v.s.man != nil {
		b.WriteString("\n" + v.schedPanel(th, w))
	}
	b.WriteString("\n" + draw.Fit(v.statusLine(th), w))
	for _, l := range draw.LogTail(th, v.s.log, v.tl.Names, k, logN, w) {
		b.WriteString("\n" + l)
	}
	for _, l := range verdict {
		b.WriteString("\n" + draw.Fit(l, w))
	}
	return b.String()
}

// header: scenario, strategy, store, virtual time, speed, mode and the
// violations so far. When it does not fit, the store goes first, then the
// title: the state never does.
func (v *runView) header(th *themes.Theme, k int, now time.Duration, w int) string {
	speed := v.pace()
	badge := th.Live
	switch v.mode() {
	case "PAUSED":
		badge = th.Paused
	case "REWOUND", "PLAYING", "END", "LOADING":
		badge = th.Rewound
	case "DONE":
		badge = th.Done
	}
	type part struct {
		text string
		drop int // 0: never dropped; higher goes first
	}
	parts := []part{
		{th.Title.Render("locklab"), 1},
		{th.Text.Render(v.s.header.Scenario + " · " + v.s.header.Strategy), 0},
		{th.Muted.Render(v.s.storeName()), 2},
		{th.Text.Render("t " + draw.Dur(now)), 0},
		{th.Text.Render(speed), 0},
		{badge.Render(v.mode()), 0},
	}
	if v.s.loading != nil {
		parts = append(parts, part{th.Warn.Render("reading the log…"), 0})
	}
	if v.paused && v.s.live() && !v.s.embedded() && !v.recorded() {
		parts = append(parts, part{th.Warn.Render("view paused — Redis keeps running"), 0})
	}
	if t := v.tl.TallyAt(k); t.Get(check.NViolations) > 0 {
		viol := t.Get(check.NViolations)
		parts = append(parts, part{th.Alarm.Render(fmt.Sprintf("%d violation(s)", viol)), 0})
	}
	sep := th.Muted.Render(" │ ")
	for drop := 3; drop >= 0; drop-- {
		var keep []string
		for _, p := range parts {
			if p.drop == 0 || p.drop < drop {
				keep = append(keep, p.text)
			}
		}
		line := strings.Join(keep, sep)
		if draw.AnsiWidth(line) <= w || drop == 0 {
			return line
		}
	}
	return ""
}

// statusLine shows a message when there is one, else the lane legend.
func (v *runView) statusLine(th *themes.Theme) string {
	if v.status != "" {
		return th.Accent.Render(v.status)
	}
	if v.branchNote != "" {
		return th.Warn.Render(v.branchNote)
	}
	if v.s.loading != nil {
		return draw.Legend(th) + "  " + th.Muted.Render(fmt.Sprintf("event %d/%d so far", v.cursor+1, v.tl.N))
	}
	return draw.Legend(th) + "  " + th.Muted.Render(fmt.Sprintf("event %d/%d", v.cursor+1, v.tl.N))
}

// verdict is the banner at the end of a run: the checker's verdict and the
// lab's summary fields, only once the run is over and the cursor at its end.
func (v *runView) verdict(th *themes.Theme, k, w int) []string {
	if !v.recorded() || k < v.tl.N-1 || v.s.summary == nil {
		return nil
	}
	s := v.s.summary
	style := th.VerdictBad
	if strings.HasPrefix(s.Verdict, "CORRECT") {
		style = th.VerdictGood
	}
	fields := fmt.Sprintf("attempts %d · ok %d · lock fails %d", s.Attempts, s.Successes, s.FailedLock)
	if s.FailedStale > 0 {
		fields += fmt.Sprintf(" · stopped by a fence %d", s.FailedStale)
	}
	if s.HasStock { // a run without a stock cannot fail on one
		fields += fmt.Sprintf(" · stock fails %d · stock %d→%d (expected %d)", s.FailedStock, s.InitialStock, s.FinalStock, s.ExpectedStock)
	}
	fields += fmt.Sprintf(" · overlaps %d · lost updates %d · %s", s.Overlaps, s.LostUpdates, draw.Dur(s.Duration.D()))
	return wrapLines([]string{style.Render(s.Verdict) + " " + th.Muted.Render(fields), th.Text.Render(s.Detail)}, w)
}

// markerName names a marker kind for the status line.
func markerName(kind timeline.MarkerKind) string {
	switch kind {
	case timeline.MarkerViolation:
		return "violation"
	case timeline.MarkerExpiry:
		return "TTL lapse under a working holder"
	case timeline.MarkerDeadlock:
		return "deadlock"
	case timeline.MarkerCrash:
		return "crash"
	case timeline.MarkerBeat:
		return "beat"
	}
	return "marker"
}
