package tui

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/tui/timeline"
)

// A presenter's screen has no room for every lane and lock of a big cast,
// and a clicker cannot scroll: the lanes and locks in view are the ones the
// beat on screen is about.

// workerRef finds the default worker names a caption says ("w08").
var workerRef = regexp.MustCompile(`\bw(\d{2,})\b`)

// focus is what the beat on screen at cursor k is about: the
// workers its captions name (the run's and the talk's), else the worker of
// the event that said it; the locks the captions name ("lock:S"), the
// lock on that event's resource, and those the workers in focus held or
// voted on so far. Nothing before the first beat.
func (p *presenter) focus(k int) (workers []int32, locks []*timeline.Lock) {
	v := p.v
	beat, n := -1, 0
	for _, m := range v.tl.Markers {
		if int(m.Seq) <= k && p.isStop(m) {
			beat, n = int(m.Seq), n+1
		}
	}
	if beat < 0 {
		return nil, nil
	}
	e := v.s.log.At(beat)
	text := e.Msg + "\n" + extraFor(p.extras, e.Code, n).Caption
	add := func(w int32) {
		if w >= 0 && int(w) < len(v.tl.Workers) && !slices.Contains(workers, w) {
			workers = append(workers, w)
		}
	}
	for _, m := range workerRef.FindAllStringSubmatch(text, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil {
			add(int32(n))
		}
	}
	var res string
	if beat > 0 {
		// A beat comes right after the event that triggered it (a
		// part's heading, said by the run, has none): its worker is the
		// subject when the caption names nobody.
		if t := v.s.log.At(beat - 1); t.Kind != event.KindBeat && t.Worker >= 0 {
			if len(workers) == 0 {
				add(t.Worker)
			}
			res = t.Res
		}
	}
	for _, l := range v.tl.Locks {
		named := strings.Contains(text, l.Name) || (res != "" && (l.Name == res || l.Name == "lock:"+res))
		if named || touched(l, workers, k) {
			locks = append(locks, l)
		}
	}
	return workers, locks
}

// touched: one of workers held lock l, or voted on it, up to cursor k.
func touched(l *timeline.Lock, workers []int32, k int) bool {
	for i := range l.Spans.Len() {
		if sp := l.Spans.At(i); int(sp.Seq) <= k && slices.Contains(workers, sp.Holder) {
			return true
		}
	}
	for _, vt := range l.Votes {
		if int(vt.Seq) <= k && slices.Contains(workers, vt.Worker) {
			return true
		}
	}
	return false
}

// focusOrder is the timeline's locks with those in focus first, each
// group in its own order.
func focusOrder(all, focus []*timeline.Lock) []*timeline.Lock {
	if len(focus) == 0 {
		return all
	}
	out := append([]*timeline.Lock(nil), focus...)
	for _, l := range all {
		if !slices.Contains(focus, l) {
			out = append(out, l)
		}
	}
	return out
}
