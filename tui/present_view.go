package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/tui/present"
	"github.com/locklab/locklab/tui/timeline"
)

// presentSplitW is the narrowest presenter layout with a panel column
// beside the lanes; narrower, each panel is one line under them.
const presentSplitW = 100

// presentPanels are the panels each scenario's story needs on a presenter's
// screen, beside the lanes and locks: every panel its captions name. A
// scenario with a stock counter gets the stock too, which its verdict
// names.
var presentPanels = map[string][]panel{
	"oversell":     {panelStock},
	"naive-flaws":  nil,
	"crash":        nil,
	"ttl-expiry":   {panelStock},
	"fencing":      {panelStock},
	"renewal":      {panelStock},
	"extend-late":  {panelStock},
	"late-grant":   {panelStock},
	"deadlock":     {panelWaits},
	"retry":        {panelRetries, panelStock},
	"redlock":      {panelNodes},
	"failover":     {panelNodes},
	"webhook":      {panelCredits},
	"queue-double": {panelJob},
	"cron":         {panelRuns},
	"trade-offs":   {panelTrade},
	"leader":       {panelLeaders},
}

// presentLayout is the panels a presenter's screen shows for a scenario:
// the story's, then the stock when there is one and it is not already in.
func presentLayout(name string, hasStock bool) []panel {
	ps, ok := presentPanels[name]
	if !ok {
		ps = []panel{panelRetries, panelWaits} // unknown to this build: the common pair
	}
	ps = append([]panel(nil), ps...)
	if hasStock && !hasPanel(ps, panelStock) {
		ps = append(ps, panelStock)
	}
	return ps
}

func hasPanel(ps []panel, p panel) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// hint says what the presenter's keys do now.
func (p *presenter) hint(k int) string {
	v := p.v
	switch {
	case v.noHints:
		return ""
	case v.scene != nil && v.s.finished() && p.state().Last:
		return "→ the next scene · ← goes back a beat"
	case k >= v.tl.N-1 && v.s.finished() && p.talk:
		return "the end of the scene · → goes on · ← goes back a beat"
	case k >= v.tl.N-1 && v.s.finished():
		return "the end of the run · ← goes back a beat · r runs it again"
	case p.waiting:
		return "→ next · ← back · p leaves presenter mode"
	case v.paused:
		return "→ plays on to the next beat"
	}
	return "playing — it stops at the next beat"
}

// render is the presenter's layout: the beat on top (its headline
// in big letters when the screen has room), then the lanes and locks with
// the panels the scenario's story names beside them, and the verdict.
func (p *presenter) render(th *themes.Theme, k int, now time.Duration, w, h int) string {
	v := p.v
	st := p.state()
	top := p.top(th, st, k, w, h)
	verdict := v.verdict(th, k, w)
	if st.ID == scenario.BeatVerdict && p.bigShown(st, w, h) {
		verdict = nil // the verdict is the beat on top, in big letters, its detail under it
	}
	bodyH := max(h-1-len(top)-len(verdict)-v.schedRows(), 6)
	var b strings.Builder
	b.WriteString(draw.Fit(v.header(th, k, now, w), w))
	for _, l := range top {
		b.WriteString("\n" + draw.Fit(l, w))
	}
	b.WriteString("\n" + p.body(th, k, now, w, bodyH))
	if v.s.man != nil {
		// The room shouts which worker goes next: the choices stay in
		// sight.
		b.WriteString("\n" + v.schedPanel(th, w))
	}
	for _, l := range verdict {
		b.WriteString("\n" + draw.Fit(l, w))
	}
	return b.String()
}

// top is the beat: big type when there is room for it, else the
// caption in a box.
func (p *presenter) top(th *themes.Theme, st PresenterState, k, w, h int) []string {
	v := p.v
	title, text := fmt.Sprintf("beat %d of %d", st.Index, st.Total), st.Caption
	if st.Extra != "" {
		text += "\n" + st.Extra
	}
	if note := p.noteAfter(k); note != "" {
		text += "\n" + note
	}
	if st.Index == 0 {
		title, text = fmt.Sprintf("beat 0 of %d", st.Total), v.s.header.Scenario+" · "+v.s.header.Strategy+" — the first beat is coming"
	}
	hint := p.hint(k)
	if big := p.bigTop(th, st, title, text, hint, w, h); big != nil {
		return big
	}
	return present.CaptionBox(th, title, text, hint, w)
}

// noteAfter is the newest beat without an ID (a fault's or a script's note)
// said after the beat on screen, up to cursor k: it is shown under the
// beat's caption instead of stopping the talk.
func (p *presenter) noteAfter(k int) string {
	v := p.v
	note := ""
	for _, m := range v.tl.Markers {
		if m.Kind != timeline.MarkerBeat || int(m.Seq) > k {
			continue
		}
		if e := v.s.log.At(int(m.Seq)); e.Code == "" {
			note = e.Msg
		} else {
			note = ""
		}
	}
	return note
}

// body is the lanes and locks, with the story's panels in a column
// beside them (or a line each under them on a narrow screen), h rows.
func (p *presenter) body(th *themes.Theme, k int, now time.Duration, w, h int) string {
	v := p.v
	ps := presentLayout(v.s.header.Scenario, v.tl.HasStock)
	span := p.span(k, now)
	focus, inFocus := p.focus(k)
	locks := focusOrder(v.tl.Locks, inFocus)
	lockRows := min(2*len(v.tl.Locks), 4)
	lockH := 0
	if lockRows > 0 {
		lockH = lockRows + 2
	}
	if w >= presentSplitW && len(ps) > 0 {
		rw := min(rightW, w*2/5)
		lw := w - rw
		laneH := max(h-lockH, 4)
		if laneH+lockH > h {
			lockH = 0
			laneH = h
		}
		labelW := draw.LabelWidth(v.tl, laneH-3)
		left := draw.Box(th, "swimlanes", draw.LanesFocus(th, v.tl, k, now, span, lw-2, labelW, laneH-2, v.scroll, focus), lw, laneH)
		if lockH > 0 {
			left += "\n" + draw.Box(th, "locks", draw.LockLanesOf(th, v.tl, locks, k, now, span, lw-2, labelW, lockRows), lw, lockH)
		}
		return draw.JoinH(left, v.column(th, ps, k, now, rw, h))
	}
	var lines []string
	for _, p := range ps {
		if p == panelNodes {
			rows := nodeRows(th, v.tl, k, now, w-2)
			lines = append(lines, strings.Split(draw.Box(th, "nodes", rows, w, len(rows)+2), "\n")...)
			continue
		}
		lines = append(lines, draw.Fit(v.onePanelLine(th, p, k, now, w), w))
	}
	laneH := max(h-lockH-len(lines), 4)
	if laneH+lockH+len(lines) > h {
		lockH = 0
		laneH = max(h-len(lines), 4)
	}
	labelW := draw.LabelWidth(v.tl, laneH-3)
	out := draw.Box(th, "swimlanes", draw.LanesFocus(th, v.tl, k, now, span, w-2, labelW, laneH-2, v.scroll, focus), w, laneH)
	if lockH > 0 {
		out += "\n" + draw.Box(th, "locks", draw.LockLanesOf(th, v.tl, locks, k, now, span, w-2, labelW, lockRows), w, lockH)
	}
	for _, l := range lines {
		out += "\n" + l
	}
	return out
}

// onePanelLine is panel p in one line, its title first.
func (v *runView) onePanelLine(th *themes.Theme, p panel, k int, now time.Duration, w int) string {
	switch p {
	case panelStock:
		return th.Muted.Render("stock: ") + draw.GaugeLine(th, v.tl, k)
	case panelRetries:
		return retryLine(&v.hist, th, v.tl, k)
	case panelWaits:
		g := draw.WaitGraph(th, v.tl, k, w, 1)
		if len(g) > 2 {
			return th.Muted.Render("wait-for: ") + g[2]
		}
		return th.Muted.Render("wait-for: ") + strings.Join(g, "  ")
	case panelCredits:
		return th.Muted.Render("credits: ") + strings.Join(credits(th, v.tl, k), "  ")
	case panelJob:
		return strings.Join(jobState(th, v.tl, k, now)[:3], "  ")
	case panelRuns:
		return th.Muted.Render("runs: ") + strings.Join(periodRuns(th, v.tl, k), "  ")
	case panelTrade:
		return strings.Join(v.tradeTable(th, k, now, false), " · ")
	case panelLeaders:
		return strings.Join(v.leaders(th, k), " · ")
	}
	return ""
}

// span is the time window of the presenter's lanes: the part of the
// run being told. A recorded run's reaches the next beat the presenter
// stops at (or the end); a live run's, the scenario's own time scale (see
// storyScale) until the run outgrows it. Either way at least now.
func (p *presenter) span(k int, now time.Duration) time.Duration {
	v := p.v
	span := storyScale(v.s.header.Scenario, v.s.header.Params)
	if v.recorded() {
		span = v.endT()
		if b, ok := p.nextBeat(int64(k), v.tl.N-1); ok {
			span = v.eventT(int(b))
		}
		span += span / 20 // the beat's event just inside the right edge
	}
	return max(span, now)
}

// storyScale is how long a scenario's story takes to unfold, from its
// parameters: what its lanes show before the run reaches it.
func storyScale(name string, p event.Params) time.Duration {
	switch name {
	case "retry":
		return 2 * p.RetryBase.D() // the first wave and the herd coming back
	case "oversell", "webhook":
		return 3 * p.Delay.D() // the race window
	case "ttl-expiry", "fencing", "renewal", "extend-late", "late-grant", "crash", "deadlock", "naive-flaws", "queue-double", "redlock":
		return p.TTL.D() * 5 / 4 // the TTL lapses: the story's turn
	case "cron":
		return p.Work.D() * 5 / 2 // the late server fires after the first run
	case "trade-offs":
		return 3 * (p.TTL.D() + p.Work.D()) // three stores in turn
	case "leader":
		return p.TTL.D() + p.Work.D() // the leader's term and its pause
	}
	return 0
}

// bigShown reports whether the beat st is on top in big type at w×h.
func (p *presenter) bigShown(st PresenterState, w, h int) bool {
	if p.big == nil {
		p.big = bigCache{}
	}
	return w >= present.W && h >= present.H && st.Index > 0 && st.ID != "" &&
		p.big.letters(present.Headline(st.ID, st.Caption), w-2, h >= present.Tall) != nil
}
