package tui

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// describe says an event in words: "w07 acquired lock:stock token 3fa9… ttl 5s".
func describe(e scenario.Event) string {
	var b strings.Builder
	b.WriteString(scenario.WorkerName(e.Worker))
	b.WriteByte(' ')
	b.WriteString(verb(e))
	if e.Res != "" && e.Kind != scenario.KindViolation {
		b.WriteString(" " + e.Res)
	}
	if e.Has&scenario.HasNode != 0 {
		fmt.Fprintf(&b, " node %d", e.Node)
	}
	if e.Token != "" && (e.Kind == scenario.KindAcquired || e.Kind == scenario.KindRelease) {
		fmt.Fprintf(&b, " token %.4s…", e.Token)
	}
	if e.Has&scenario.HasFence != 0 {
		fmt.Fprintf(&b, " fence %d", e.Fence)
	}
	if e.Has&scenario.HasTTL != 0 && (e.Kind == scenario.KindAcquired || e.Kind == scenario.KindRenewed) {
		b.WriteString(" ttl " + dur(e.TTL))
	}
	if e.Has&scenario.HasDelay != 0 {
		b.WriteString(" for " + dur(e.Delay))
	}
	if e.Has&scenario.HasStock != 0 {
		fmt.Fprintf(&b, " stock=%d", e.Stock)
	}
	if e.Has&scenario.HasPeer != 0 && e.Kind == scenario.KindWait {
		b.WriteString(" held by " + scenario.WorkerName(e.Peer))
	}
	if e.Msg != "" {
		b.WriteString(": " + e.Msg)
	}
	return b.String()
}

func verb(e scenario.Event) string {
	switch e.Kind {
	case scenario.KindAttempt:
		if e.Attempt > 1 {
			return fmt.Sprintf("tries again (#%d) for", e.Attempt)
		}
		return "tries"
	case scenario.KindDenied:
		return "is denied"
	case scenario.KindBackoff:
		return "backs off on"
	case scenario.KindWorkStart:
		return "enters critical section"
	case scenario.KindWorkEnd:
		return "leaves critical section"
	case scenario.KindRead:
		return "reads"
	case scenario.KindWrite:
		if e.Has&scenario.HasOK != 0 && !e.OK {
			return "write refused"
		}
		return "writes"
	case scenario.KindRelease:
		return "released"
	case scenario.KindReleaseFailed:
		return "release refused"
	case scenario.KindVote:
		if e.OK {
			return "got a yes from"
		}
		return "got a no from"
	case scenario.KindDone:
		if e.OK {
			return "done ✓"
		}
		return "done ✗"
	case scenario.KindInit:
		return "sets up"
	case scenario.KindViolation:
		return "VIOLATION"
	case scenario.KindWait:
		return "waits for"
	}
	return strings.ReplaceAll(e.Kind.String(), "_", " ")
}

// logTail renders the n events up to cursor k, newest last; names are the
// lanes' own names, if the log gives them.
func logTail(th *themes.Theme, log *scenario.Log, names []string, k, n, width int) []string {
	var out []string
	for i := max(k-n+1, 0); i <= k && i < log.Len(); i++ {
		e := log.At(i)
		t := th.Muted.Render(fmt.Sprintf("%10s ", dur(e.T)))
		text := describe(e)
		style := th.Text
		switch e.Kind {
		case scenario.KindViolation:
			style = th.Alarm
		case scenario.KindReleaseFailed, scenario.KindExpired, scenario.KindLockLost, scenario.KindFenceRejected, scenario.KindCrash:
			style = th.Warn
		}
		who := scenario.WorkerName(e.Worker)
		text = strings.TrimPrefix(text, who)
		if e.Worker >= 0 && int(e.Worker) < len(names) && names[e.Worker] != "" {
			who = names[e.Worker]
		}
		line := t + th.Worker(int(e.Worker)).Render(who) + style.Render(text)
		out = append(out, fit(line, width))
	}
	for len(out) < n {
		out = append([]string{""}, out...)
	}
	return out
}
