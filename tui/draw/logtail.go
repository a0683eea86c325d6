package draw

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/themes"
)

// Describe says an event in words: "w07 acquired lock:stock token 3fa9… ttl 5s".
func Describe(e event.Event) string {
	var b strings.Builder
	b.WriteString(check.WorkerName(e.Worker))
	b.WriteByte(' ')
	b.WriteString(verb(e))
	if e.Res != "" && e.Kind != event.KindViolation {
		b.WriteString(" " + e.Res)
	}
	if e.Has&event.HasNode != 0 {
		fmt.Fprintf(&b, " node %d", e.Node)
	}
	if e.Token != "" && (e.Kind == event.KindAcquired || e.Kind == event.KindRelease) {
		fmt.Fprintf(&b, " token %.4s…", e.Token)
	}
	if e.Has&event.HasFence != 0 {
		fmt.Fprintf(&b, " fence %d", e.Fence)
	}
	if e.Has&event.HasTTL != 0 && (e.Kind == event.KindAcquired || e.Kind == event.KindRenewed) {
		b.WriteString(" ttl " + Dur(e.TTL))
	}
	if e.Has&event.HasDelay != 0 {
		b.WriteString(" for " + Dur(e.Delay))
	}
	if e.Has&event.HasStock != 0 {
		fmt.Fprintf(&b, " stock=%d", e.Stock)
	}
	if e.Has&event.HasPeer != 0 && e.Kind == event.KindWait {
		b.WriteString(" held by " + check.WorkerName(e.Peer))
	}
	if e.Msg != "" {
		b.WriteString(": " + e.Msg)
	}
	return b.String()
}

func verb(e event.Event) string {
	if e.Outcome == event.OutcomeGaveUp {
		return "gave up, at its library's deadline, on" // the Msg says which call, and whether it went out
	}
	switch e.Kind {
	case event.KindAttempt:
		if e.Attempt > 1 {
			return fmt.Sprintf("tries again (#%d) for", e.Attempt)
		}
		return "tries"
	case event.KindDenied:
		return "is denied"
	case event.KindBackoff:
		return "backs off on"
	case event.KindWorkStart:
		return "enters critical section"
	case event.KindWorkEnd:
		return "leaves critical section"
	case event.KindRead:
		return "reads"
	case event.KindWrite:
		if e.Has&event.HasOK != 0 && !e.OK {
			return "write refused"
		}
		return "writes"
	case event.KindRelease:
		return "released"
	case event.KindReleaseFailed:
		return "release refused"
	case event.KindVote:
		if e.OK {
			return "got a yes from"
		}
		return "got a no from"
	case event.KindDone:
		if e.OK {
			return "done ✓"
		}
		return "done ✗"
	case event.KindInit:
		return "sets up"
	case event.KindViolation:
		return "VIOLATION"
	case event.KindWait:
		return "waits for"
	}
	return strings.ReplaceAll(e.Kind.String(), "_", " ")
}

// LogTail renders the n events up to cursor k, newest last; names are the
// lanes' own names, if the log gives them.
func LogTail(th *themes.Theme, log *event.Log, names []string, k, n, width int) []string {
	var out []string
	for i := max(k-n+1, 0); i <= k && i < log.Len(); i++ {
		e := log.At(i)
		t := th.Muted.Render(fmt.Sprintf("%10s ", Dur(e.T)))
		text := Describe(e)
		style := th.Text
		switch e.Kind {
		case event.KindViolation:
			style = th.Alarm
		case event.KindReleaseFailed, event.KindExpired, event.KindLockLost, event.KindFenceRejected, event.KindCrash:
			style = th.Warn
		}
		who := check.WorkerName(e.Worker)
		text = strings.TrimPrefix(text, who)
		if e.Worker >= 0 && int(e.Worker) < len(names) && names[e.Worker] != "" {
			who = names[e.Worker]
		}
		line := t + th.Worker(int(e.Worker)).Render(who) + style.Render(text)
		out = append(out, Fit(line, width))
	}
	for len(out) < n {
		out = append([]string{""}, out...)
	}
	return out
}
