package timeline

import (
	"strings"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// Effect is a write to a resource whose effect is allowed once (a credit,
// a job's side effect), or an entry into a critical section (a delivery
// handled, a job run).
type Effect struct {
	Seq    int64
	Res    string
	Worker int32
	Msg    string
}

// foldEffect records writes to once-only resources and entries.
func (tl *Timeline) foldEffect(seq int64, e *event.Event) {
	switch e.Kind {
	case event.KindInit:
		if e.Code == check.LimitOnce {
			if tl.once == nil {
				tl.once = map[string]bool{}
			}
			tl.once[e.Res] = true
			tl.OnceRes = append(tl.OnceRes, e.Res)
		}
	case event.KindWrite:
		if tl.once[e.Res] && (e.Has&event.HasOK == 0 || e.OK) {
			tl.Applied = append(tl.Applied, Effect{seq, e.Res, e.Worker, e.Msg})
		}
	case event.KindRelease:
		// A resource, not a lock, released: a job deleted when done.
		if len(tl.once) > 0 && !strings.HasPrefix(e.Res, "lock:") && !strings.HasPrefix(e.Res, "reserved:") && e.OK {
			tl.Finished = append(tl.Finished, Effect{seq, e.Res, e.Worker, e.Msg})
		}
	case event.KindWorkStart:
		if len(tl.once) > 0 {
			tl.Entered = append(tl.Entered, Effect{seq, e.Res, e.Worker, ""})
		}
	}
}

// AppliedAt returns the once-only writes as of cursor k.
func (tl *Timeline) AppliedAt(k int) []Effect {
	return tl.Applied[:upTo(len(tl.Applied), func(i int) int64 { return tl.Applied[i].Seq }, int64(k))]
}

// EnteredAt returns the entries into critical sections as of cursor k, in
// runs that have once-only resources.
func (tl *Timeline) EnteredAt(k int) []Effect {
	return tl.Entered[:upTo(len(tl.Entered), func(i int) int64 { return tl.Entered[i].Seq }, int64(k))]
}

// FinishedAt returns the resources released (jobs deleted) as of cursor k.
func (tl *Timeline) FinishedAt(k int) []Effect {
	return tl.Finished[:upTo(len(tl.Finished), func(i int) int64 { return tl.Finished[i].Seq }, int64(k))]
}
