package linear

import (
	"context"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// The judging of `locklab check`'s histories, one resource at a time,
// within the run's deadline and memory: a watchdog stops the search (the
// witness's loop and porcupine's, whose model's steps it makes fail) when
// the deadline passes, the user interrupts, or the heap passes
// searchHeap — porcupine keeps a copy of its linearized set per step,
// so its memory grows with its time. A history stopped so is given up,
// with the reason.

// searchHeap is the heap at which a search is stopped.
const searchHeap = 640 << 20

// The reasons a history was not judged.
const (
	whyTimeout     = "timeout"
	whyMemory      = "memory: the search passed check's budget"
	whyTooLong     = "too long to hold in memory"
	whyInterrupted = "interrupted"
)

// judge stops its searches when told.
type judge struct {
	ctx      context.Context
	deadline time.Time
	abort    atomic.Int32 // 1 once a search must stop
	why      atomic.Value // the reason, a string
	draw     bool
}

// watch stops the searches when the deadline passes, ctx ends, or the heap
// passes searchHeap; it returns when stop is closed.
func (j *judge) watch(stop <-chan struct{}) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		select {
		case <-stop:
			return
		case <-j.ctx.Done():
			j.stop(whyInterrupted)
			return
		case now := <-tick.C:
			if !now.Before(j.deadline) {
				j.stop(whyTimeout)
				return
			}
			if j.abort.Load() != 0 {
				continue
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > searchHeap {
				j.stop(whyMemory)
			}
		}
	}
}

func (j *judge) stop(why string) {
	j.why.Store(why)
	j.abort.Store(1)
}

// stopped is why the searches were stopped; "" while they go on.
func (j *judge) stopped() string {
	if j.abort.Load() == 0 {
		return ""
	}
	if w, ok := j.why.Load().(string); ok {
		return w
	}
	return whyTimeout
}

// result judges one history.
func (j *judge) result(p *partition) partResult {
	r := partResult{model: p.model, res: p.res, ops: p.n, m: p.m}
	sw := p.sw.ok(p.m)
	switch {
	case j.stopped() != "":
		r.result, r.why = porcupine.Unknown, j.stopped()
	case sw && !j.draw || p.dropped && sw:
		r.result, r.witness = porcupine.Ok, "return"
	case p.dropped:
		r.result, r.why = porcupine.Unknown, whyTooLong
	default:
		ops := p.ops.all()
		if at, ok := j.witness(p.m, ops); ok && !j.draw {
			r.result, r.witness = porcupine.Ok, at
			break
		}
		m := p.m
		step := m.Step
		m.Step = func(state, input, output interface{}) (bool, interface{}) {
			if j.abort.Load() != 0 {
				return false, state // unwinds the search at once
			}
			return step(state, input, output)
		}
		if j.draw {
			r.result, r.info = porcupine.CheckOperationsVerbose(m, ops, 0)
			r.drawn = true
		} else {
			r.result = porcupine.CheckOperationsTimeout(m, ops, 0)
		}
		if why := j.stopped(); why != "" {
			r.result, r.why = porcupine.Unknown, why
		}
	}
	if r.result == porcupine.Unknown && r.why == "" {
		r.why = whyTimeout
	}
	p.ops = opList{} // judged: its memory is the next one's
	return r
}

// witness is witness(m, ops) that stops when the searches must.
func (j *judge) witness(m porcupine.Model, ops []porcupine.Operation) (string, bool) {
	for _, at := range placements {
		if j.abort.Load() != 0 {
			return "", false
		}
		order := make([]*porcupine.Operation, len(ops))
		for i := range ops {
			order[i] = &ops[i]
		}
		sort.SliceStable(order, func(a, b int) bool { return at.point(order[a]) < at.point(order[b]) })
		state, ok := m.Init(), true
		for i, o := range order {
			if i%4096 == 0 && j.abort.Load() != 0 {
				return "", false
			}
			if ok, state = m.Step(state, o.Input, o.Output); !ok {
				break
			}
		}
		if ok {
			return at.name, true
		}
	}
	return "", false
}

// thousandsOf writes n with thousands separators: 1,225.
func thousandsOf(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
