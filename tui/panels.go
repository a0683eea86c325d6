package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/tui/timeline"
)

// panel is a box of the run view's right-hand column: where a scenario's
// lesson lives.
type panel uint8

const (
	panelStock   panel = iota // sold against stock, lost updates
	panelRetries              // the retry-delay histogram
	panelWaits                // the wait-for graph
	panelNodes                // Redlock's nodes: state and holder on each
	panelCredits              // webhook: deliveries against credits
	panelJob                  // a queue's job: queued, reserved, done; runs
	panelRuns                 // cron: who ran the period's job, against once
	panelTrade                // trade-offs: each store's answer to the crash or pause
	panelLeaders              // leader: who believes it leads, what the ledger took
)

var panelTitles = map[panel]string{panelStock: "stock", panelRetries: "retry delays", panelWaits: "wait-for",
	panelNodes: "nodes", panelCredits: "credits", panelJob: "job", panelRuns: "runs this period",
	panelTrade: "trade-offs", panelLeaders: "leaders"}

// scenarioPanels declares each scenario's panels, the one its lesson is
// in first. A scenario not listed gets stock (when it has one), retry
// delays and the wait-for graph.
var scenarioPanels = map[string][]panel{
	"oversell":     {panelStock, panelRetries, panelWaits},
	"naive-flaws":  {panelRetries, panelWaits},
	"crash":        {panelRetries, panelWaits},
	"ttl-expiry":   {panelStock, panelRetries},
	"fencing":      {panelStock, panelRetries},
	"renewal":      {panelStock, panelRetries},
	"extend-late":  {panelStock, panelRetries},
	"late-grant":   {panelStock, panelRetries},
	"deadlock":     {panelWaits, panelRetries},
	"retry":        {panelRetries, panelStock},
	"redlock":      {panelNodes, panelRetries},
	"failover":     {panelNodes, panelRetries},
	"webhook":      {panelCredits, panelRetries},
	"queue-double": {panelJob, panelRetries},
	"cron":         {panelRuns},
	"trade-offs":   {panelTrade},
	"leader":       {panelLeaders, panelRetries},
}

// panelsOf are the panels of the run with header h: its scenario's, less
// the retry delays where the run cannot retry at all (the scenario takes
// no retry policy nor limit, the policy is none, or its strategy never
// retries): an empty histogram there has nothing to say.
func panelsOf(h event.Header, tl *timeline.Timeline) []panel {
	ps, ok := scenarioPanels[h.Scenario]
	if !ok {
		ps = []panel{panelRetries, panelWaits}
		if tl.HasStock {
			ps = append([]panel{panelStock}, ps...)
		}
	}
	if (strings.HasPrefix(h.Store, "spawned ") || len(tl.Nets) > 0) && !slices.Contains(ps, panelNodes) {
		ps = append([]panel{panelNodes}, ps...) // the servers the run started, the links' faults
	}
	if sc, err := scenario.Lookup(h.Scenario); err == nil && !sc.Retries(h.Strategy, h.Params) {
		ps = slices.DeleteFunc(slices.Clone(ps), func(p panel) bool { return p == panelRetries })
	}
	return ps
}

// panelHeight is the fixed height of a panel's box; 0: it takes what is left.
func panelHeight(p panel, tl *timeline.Timeline, bodyH int) int {
	switch p {
	case panelStock:
		return 5
	case panelWaits:
		return max(5, bodyH/4)
	case panelNodes:
		h := max(len(tl.NodesAt(tl.N-1)), 1) + 3 + tl.NetPeak()
		if s := len(tl.ServersAt(tl.N - 1)); bodyH >= 2*(h+s) {
			h += s // the spawned servers, where there is room for them
		}
		return h
	case panelCredits:
		return 5
	case panelJob:
		return 6
	case panelRuns:
		return 5
	case panelTrade:
		return 5
	case panelLeaders:
		return 5
	}
	return 0
}

// rightColumn stacks the scenario's panels in a column w wide, h high.
func (v *runView) rightColumn(th *themes.Theme, k int, now time.Duration, w, h int) string {
	return v.column(th, panelsOf(v.s.header, v.tl), k, now, w, h)
}

// column stacks panels ps in a column w wide, h high.
func (v *runView) column(th *themes.Theme, ps []panel, k int, now time.Duration, w, h int) string {
	heights := make([]int, len(ps))
	left, flex := h, -1
	for i, p := range ps {
		heights[i] = panelHeight(p, v.tl, h)
		if heights[i] == 0 && flex < 0 {
			flex = i
			continue
		}
		heights[i] = min(heights[i], left)
		left -= heights[i]
	}
	if flex >= 0 {
		heights[flex] = left
	} else if len(heights) > 0 {
		heights[len(heights)-1] += left
	}
	var boxes []string
	for i, p := range ps {
		if heights[i] < 3 {
			continue
		}
		boxes = append(boxes, draw.Box(th, panelTitles[p], v.panelLines(th, p, k, now, w-2, heights[i]-2), w, heights[i]))
	}
	return strings.Join(boxes, "\n")
}

func (v *runView) panelLines(th *themes.Theme, p panel, k int, now time.Duration, w, h int) []string {
	switch p {
	case panelStock:
		return draw.Gauge(th, v.tl, k, w)
	case panelRetries:
		return draw.Histogram(&v.hist, th, v.tl, k, w, h)
	case panelWaits:
		return draw.WaitGraph(th, v.tl, k, w, h)
	case panelNodes:
		return nodeRows(th, v.tl, k, now, w)
	case panelCredits:
		return credits(th, v.tl, k)
	case panelJob:
		return jobState(th, v.tl, k, now)
	case panelRuns:
		return periodRuns(th, v.tl, k)
	case panelTrade:
		return v.tradeTable(th, k, now, true)
	case panelLeaders:
		return v.leaders(th, k)
	}
	return nil
}

// panelLine is the compact layout's one line: the first panel that has one.
func (v *runView) panelLine(th *themes.Theme, k int, now time.Duration, w int) string {
	if cyc := draw.WaitGraph(th, v.tl, k, w, 1); len(cyc) > 2 {
		return cyc[2]
	}
	for _, p := range panelsOf(v.s.header, v.tl) {
		switch p {
		case panelStock:
			return draw.GaugeLine(th, v.tl, k)
		case panelCredits:
			return strings.Join(credits(th, v.tl, k), "  ")
		case panelJob:
			return strings.Join(jobState(th, v.tl, k, now)[:2], "  ")
		case panelRuns:
			return strings.Join(periodRuns(th, v.tl, k), "  ")
		case panelTrade:
			return strings.Join(v.tradeTable(th, k, now, false), " · ")
		case panelLeaders:
			return strings.Join(v.leaders(th, k), " · ")
		case panelRetries:
			return retryLine(&v.hist, th, v.tl, k)
		case panelWaits:
			return draw.WaitGraph(th, v.tl, k, w, 1)[0]
		}
	}
	return ""
}

// credits is the webhook's panel: how many deliveries were handled, how
// many times the once-only effect was applied, and what it left.
func credits(th *themes.Theme, tl *timeline.Timeline, k int) []string {
	applied := tl.AppliedAt(k)
	entered := tl.EnteredAt(k)
	n := len(applied)
	style, tag := th.Text, th.OK.Render("ok")
	if n > 1 {
		style, tag = th.Alarm, th.Alarm.Render(fmt.Sprintf("DUPLICATE: %d extra", n-1))
	}
	out := []string{
		fmt.Sprintf("deliveries %s  credits %s of 1 allowed", th.Text.Render(fmt.Sprint(len(entered))), style.Render(fmt.Sprint(n))),
		tag,
	}
	if n > 0 {
		out = append(out, th.Muted.Render("last: "+applied[n-1].Msg+" ("+check.WorkerName(applied[n-1].Worker)+")"))
	}
	return out
}

// jobState is the queue's panel: the job's state (queued, reserved by whom
// and for how long, done), how many times it ran and its effect.
func jobState(th *themes.Theme, tl *timeline.Timeline, k int, now time.Duration) []string {
	state := th.Text.Render("queued")
	for _, l := range tl.Locks {
		if !strings.HasPrefix(l.Name, "reserved:") {
			continue
		}
		spans, _ := tl.LockAt(l, k)
		if spans.Len() == 0 {
			continue
		}
		cur := spans.At(spans.Len() - 1)
		switch {
		case cur.Holder >= 0 && (cur.TTL <= 0 || cur.Deadline > now):
			state = th.Text.Render("reserved by ") + th.Worker(int(cur.Holder)).Render(check.WorkerName(cur.Holder))
			if cur.TTL > 0 {
				state += th.Muted.Render(" · " + draw.Dur(cur.Deadline-now) + " left")
			}
		case spans.Len() > 1 || cur.Holder >= 0:
			state = th.Warn.Render("queued again: the reservation lapsed")
		}
	}
	if done := tl.FinishedAt(k); len(done) > 0 {
		state = th.OK.Render("done") + th.Muted.Render(": deleted by "+check.WorkerName(done[0].Worker))
	}
	runs := tl.EnteredAt(k)
	var who []string
	for _, r := range runs {
		who = append(who, check.WorkerName(r.Worker))
	}
	runStyle := th.Text
	if len(runs) > 1 {
		runStyle = th.Alarm
	}
	applied := tl.AppliedAt(k)
	effStyle, tag := th.Text, th.OK.Render("ok")
	if len(applied) > 1 {
		effStyle, tag = th.Alarm, th.Alarm.Render(fmt.Sprintf("DUPLICATE: applied %d times", len(applied)))
	}
	out := []string{
		th.Muted.Render("job: ") + state,
		th.Muted.Render("runs ") + runStyle.Render(fmt.Sprint(len(runs))) + th.Muted.Render(" "+strings.Join(who, ", ")),
		th.Muted.Render("effect applied ") + effStyle.Render(fmt.Sprint(len(applied))) + th.Muted.Render(" of 1 allowed"),
		tag,
	}
	return out
}

// nodeRows are Redlock's nodes, one row each — "● node 2 · clock +1s ·
// held by w03 (J)" — and a one-line legend.
func nodeRows(th *themes.Theme, tl *timeline.Timeline, k int, now time.Duration, w int) []string {
	nodes := tl.NodesAt(k)
	var servers []string
	for _, s := range tl.ServersAt(k) {
		servers = append(servers, th.Muted.Render(s.Line))
	}
	if len(nodes) == 0 {
		return append([]string{th.Muted.Render("no node has answered yet")}, servers...)
	}
	var out []string
	for _, n := range nodes {
		sym, state := themes.SymNodeUp, "up"
		switch n.State {
		case timeline.NodeStopped:
			sym, state = themes.SymNodeDown, "stopped"
		case timeline.NodePaused:
			sym, state = themes.Symbol(themes.Paused), "paused"
		case timeline.NodeFailedOver:
			sym, state = themes.SymFailover, "failed over"
		}
		if off := n.OffsetAt(now); off != 0 && n.State != timeline.NodeStopped {
			sym, state = themes.SymNodeClock, fmt.Sprintf("clock +%s", draw.Dur(off))
			if n.Slewing(now) {
				state += ", slewing"
			}
		}
		row := th.Mark(sym, 0) + " " + th.Text.Render(fmt.Sprintf("node %d", n.Index)) + th.Muted.Render(" · ") + th.Style(sym, 0).Render(state)
		switch h := n.HolderAt(now); {
		case h >= 0:
			row += th.Muted.Render(" · held by ") + th.Worker(int(h)).Render(check.WorkerName(h)) + th.Muted.Render(" ("+strings.TrimPrefix(n.Lock, "lock:")+")")
		case tl.Voted() || len(tl.Nets) == 0:
			row += th.Muted.Render(" · free")
		}
		out = append(out, row)
		for _, nf := range tl.NetsAt(k) {
			if nf.Node == n.Index {
				out = append(out, "  "+th.Mark(themes.SymNetFault, 0)+" "+th.Style(themes.SymNetFault, 0).Render(nf.Line))
			}
		}
	}
	return append(append(out, draw.LegendLine(th, themes.InNodes)), servers...)
}

// retryLine is the histogram in one line: "retry delays 100–200ms ×89 · …".
func retryLine(hc *draw.HistCache, th *themes.Theme, tl *timeline.Timeline, k int) string {
	t := tl.TallyAt(k)
	counts, n, _ := draw.RetryCounts(&t)
	if n == 0 {
		return th.Muted.Render("retry delays: none yet")
	}
	parts := []string{th.Muted.Render(fmt.Sprintf("%d retries:", n))}
	for i, c := range counts {
		if c > 0 {
			parts = append(parts, th.Text.Render(draw.DelayBins[i].Label)+th.Muted.Render(fmt.Sprintf(" ×%d", c)))
		}
	}
	return strings.Join(parts, "  ")
}
