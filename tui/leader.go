package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/themes"
)

// leaderFold is the leader scenario's state as of an event: who believes
// it leads (inside the leader's section), who of them is stopped, and what
// the ledger took and refused.
type leaderFold struct {
	upTo    int
	leaders []int32
	paused  map[int32]bool
	fence   map[int32]int64
	writes  []string // who wrote to the ledger, in order
	refused []string // w00 (rev 2): writes the ledger refused
}

func (f *leaderFold) add(e *event.Event) {
	switch {
	case e.Kind == event.KindWorkStart && e.Res == "leader":
		f.leaders = append(f.leaders, e.Worker)
	case (e.Kind == event.KindWorkEnd && e.Res == "leader") || e.Kind == event.KindCrash:
		f.leaders = slices.DeleteFunc(f.leaders, func(w int32) bool { return w == e.Worker })
	case e.Kind == event.KindPause:
		f.paused[e.Worker] = true
	case e.Kind == event.KindResume:
		delete(f.paused, e.Worker)
	case e.Kind == event.KindAcquired && e.Res == "lock:leader" && e.Has&event.HasFence != 0:
		f.fence[e.Worker] = e.Fence
	case e.Kind == event.KindWrite && e.Res == "ledger" && e.OK:
		f.writes = append(f.writes, check.WorkerName(e.Worker))
	case e.Kind == event.KindFenceRejected && e.Res == "ledger":
		f.refused = append(f.refused, fmt.Sprintf("%s (rev %d)", check.WorkerName(e.Worker), e.Fence))
	}
}

// leaders is the leader panel: who leads now (TWO LEADERS when two
// believe they do), and whose writes the ledger took and refused.
func (v *runView) leaders(th *themes.Theme, k int) []string {
	f := &v.leader
	if f.paused == nil || k+1 < f.upTo {
		*f = leaderFold{paused: map[int32]bool{}, fence: map[int32]int64{}}
	}
	for ; f.upTo <= k && f.upTo < v.s.log.Len(); f.upTo++ {
		e := v.s.log.At(f.upTo)
		f.add(&e)
	}
	names := make([]string, len(f.leaders))
	for i, w := range f.leaders {
		names[i] = check.WorkerName(w)
		if rev, ok := f.fence[w]; ok {
			names[i] += fmt.Sprintf(" rev %d", rev)
		}
		if f.paused[w] {
			names[i] += " (stopped)"
		}
	}
	var head string
	switch len(names) {
	case 0:
		head = th.Muted.Render("no leader")
	case 1:
		head = th.Text.Render("leader: ") + th.OK.Render(names[0])
	default:
		head = th.Alarm.Render("TWO LEADERS: " + strings.Join(names, ", "))
	}
	ledger := th.Muted.Render("ledger: none yet")
	if n := len(f.writes); n > 0 {
		ledger = th.Text.Render("ledger took: " + strings.Join(f.writes[max(n-6, 0):], " "))
	}
	out := []string{head, ledger}
	if len(f.refused) > 0 {
		out = append(out, th.OK.Render("refused: "+strings.Join(f.refused, ", ")))
	}
	return out
}
