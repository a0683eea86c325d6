package scenario

import (
	"fmt"
	"strings"
	"sync"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/sim"
)

// Step is a step of a simulated run chosen by hand: at the scheduler's
// step N (counted from 1), the actor at Actor went ("w01", or "w01/node
// 2" for one its worker started). With the seed, a run's hand-chosen steps
// are part of its schedule.
type Step struct {
	N     uint64
	Actor string
}

// WaitStep is a Step's Actor when the hand let time pass at that step
// (sim.Wait) before choosing who goes: to the end of the earliest sleep.
const WaitStep = "wait"

// StepError is a hand-chosen step the run could not take: the run ends
// there, with no verdict.
type StepError struct{ Msg string }

func (e *StepError) Error() string { return e.Msg }

// hand keeps the steps chosen by hand as the run takes them.
type hand struct {
	mu    sync.Mutex
	steps []Step
	plan  []Step // still to take
}

// Hand is the steps chosen by hand so far: from the plan the run was
// given, then from its steerer.
func (r *Run) Hand() []Step {
	r.hand.mu.Lock()
	defer r.hand.mu.Unlock()
	return append([]Step(nil), r.hand.steps...)
}

// steerer decides a step from the plan when it names the step, else asks
// live (if set). A planned actor that cannot go ends the run with why.
func (r *Run) steerer(live sim.Steer) sim.Steer {
	return func(step uint64, cands []sim.Candidate) int {
		h := &r.hand
		h.mu.Lock()
		var want *Step
		if len(h.plan) > 0 && h.plan[0].N == step {
			want = &h.plan[0]
			h.plan = h.plan[1:]
		}
		h.mu.Unlock()
		if want != nil && want.Actor == WaitStep {
			r.took(*want)
			return sim.Wait
		}
		if want != nil {
			for i, c := range cands {
				if c.Path == want.Actor {
					r.took(*want)
					return i
				}
			}
			r.halt(&StepError{fmt.Sprintf("step %d: %s cannot move (%s)", want.N, want.Actor, r.whyNot(want.Actor))})
			return -1
		}
		if live == nil {
			return -1
		}
		i := live(step, cands)
		switch {
		case i == sim.Wait:
			r.took(Step{step, WaitStep})
		case i >= 0 && i < len(cands):
			r.took(Step{step, cands[i].Path})
		}
		return i
	}
}

func (r *Run) took(s Step) {
	r.hand.mu.Lock()
	r.hand.steps = append(r.hand.steps, s)
	r.hand.mu.Unlock()
}

// halt ends the run for err, which its Wait returns.
func (r *Run) halt(err error) {
	r.stuck.CompareAndSwap(nil, &err)
	r.cancel()
}

// unplanned is the first planned step the run never came to, if any.
func (r *Run) unplanned() error {
	r.hand.mu.Lock()
	defer r.hand.mu.Unlock()
	if len(r.hand.plan) == 0 {
		return nil
	}
	s := r.hand.plan[0]
	return &StepError{fmt.Sprintf("step %d: %s cannot move (the run ended at step %d)", s.N, s.Actor, r.Steps())}
}

// whyNot says why the actor at path cannot go now: what its worker last
// tried, then what the simulation knows of it.
func (r *Run) whyNot(path string) string {
	why := r.rt.Why(path)
	name, _, _ := strings.Cut(path, "/")
	w := int32(-1)
	for i, l := range r.Header.Lanes {
		if l == name {
			w = int32(i)
		}
	}
	if w < 0 || strings.HasPrefix(why, "it has finished") || strings.HasPrefix(why, "no actor") {
		return why
	}
	for i := r.Log.Len() - 1; i >= 0; i-- {
		e := r.Log.At(i)
		if e.Worker != w {
			continue
		}
		if e.Res != "" && (e.Kind == event.KindDenied || e.Kind == event.KindBackoff || e.Kind == event.KindWait || e.Kind == event.KindAttempt) {
			return "it is waiting for " + e.Res + "; " + why
		}
		return why
	}
	return why
}

// StepAt is the scheduler's step at which event i was logged (its actor's
// step): a branch from that event goes on from the next one. 0 when the
// run is not simulated.
func (r *Run) StepAt(i int) uint64 { return r.Log.StepAt(i) }
