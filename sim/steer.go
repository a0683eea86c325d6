package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A steered run lets someone other than the seeded PRNG say who goes at
// a step: a person at the keyboard (the scheduler mode of the view) or a
// schedule file's hand-chosen steps. At each step the steerer is asked
// once, at the first point where an actor could go; it names one of the
// candidates, or leaves the step to the seed. Candidates are the actors
// that can go now and those on their way to a server: a chosen one of
// those arrives at once (the network was quick for it), so its command
// runs at the simulated time of the step. The same seed and the same
// choices give the same run.

// Candidate is an actor that could go at a step.
type Candidate struct {
	Path  string // its name, after the names of the actors that started it ("w01/node 2")
	Doing string // the command it is on its way to send, or "" (it goes on from where it stopped)
	Ready bool   // it can go now; else it is on its way to a server
}

// Wait, returned by a Steer, lets time pass instead: to the end of the
// earliest sleep (a backoff, a TTL's wait, a worker's work), holding back
// every candidate — those on their way to a server arrive meanwhile and
// wait to be chosen. The steerer is then asked again about the same step.
const Wait = -2

// Steer decides who goes at step (counted from 1): the index of one of
// cands, −1 to leave it to the seed, or Wait. It is called on the scheduler's
// goroutine while no actor runs; it may block (a person deciding).
type Steer func(step uint64, cands []Candidate) int

// SteerWith makes steer decide the steps it wants to. It is called before
// Start.
func (rt *Runtime) SteerWith(steer Steer) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.steer = steer
	rt.steering.Store(steer != nil)
}

// Steered reports whether someone other than the seed may decide steps.
func (rt *Runtime) Steered() bool { return rt.steering.Load() }

// Trip parks the calling actor for d, the time its command takes to
// reach the server: what is the command, which a steered run shows and
// may let arrive at once.
func (rt *Runtime) Trip(ctx context.Context, d time.Duration, what string) error {
	a := rt.self(ctx)
	if a == nil || what == "" {
		return rt.SleepUntil(ctx, rt.Now()+d)
	}
	rt.mu.Lock()
	a.trip = what
	rt.mu.Unlock()
	err := rt.SleepUntil(ctx, rt.Now()+d)
	rt.mu.Lock()
	a.trip = ""
	rt.mu.Unlock()
	return err
}

// path is a's name after its starters' (the run's first actor left out).
func (a *actor) path() string {
	var names []string
	for b := a; b != nil && b.up != nil; b = b.up {
		names = append(names, b.name)
	}
	if len(names) == 0 {
		return a.name
	}
	slices.Reverse(names)
	return strings.Join(names, "/")
}

// candidates are the actors that could go now, in the order they were
// started. mu is held.
func (rt *Runtime) candidates() ([]Candidate, []*actor) {
	var who []*actor
	who = append(who, rt.runnable...)
	for _, s := range rt.timers {
		if t := s.t; !t.done && t.a != nil && t.a.trip != "" && t.a.wait.Err() == nil {
			who = append(who, t.a)
		}
	}
	slices.SortFunc(who, func(a, b *actor) int { return a.id - b.id })
	cands := make([]Candidate, len(who))
	for i, a := range who {
		cands[i] = Candidate{Path: a.path(), Ready: a.timer == nil}
		if !cands[i].Ready {
			cands[i].Doing = a.trip
		}
	}
	return cands, who
}

// steered asks the steerer, once a step, who goes; nil leaves the step to
// the seed. again says time was let pass: ask again. mu is held (and let
// go while the steerer decides).
func (rt *Runtime) steered() (a *actor, again bool) {
	step := rt.steps.Load() + 1
	if rt.steer == nil || rt.asked >= step {
		return nil, false
	}
	cands, who := rt.candidates()
	if len(cands) == 0 {
		return nil, false
	}
	rt.asked = step
	rt.mu.Unlock()
	i := rt.steer(step, cands)
	rt.mu.Lock()
	if i == Wait {
		// Nothing sleeping: nothing to wait for; the steerer is asked
		// again all the same.
		if at, ok := rt.nextSleep(); ok {
			rt.fire(at)
		}
		rt.asked = step - 1
		return nil, true
	}
	if i < 0 || i >= len(who) {
		return nil, false
	}
	a = who[i]
	if j := slices.Index(rt.runnable, a); j >= 0 {
		rt.runnable = slices.Delete(rt.runnable, j, j+1)
	} else if a.timer != nil {
		a.timer.done = true
		a.timer = nil
	}
	a.state = ready
	return a, false
}

// nextSleep is when the earliest sleep that is no trip to a server ends.
// mu is held.
func (rt *Runtime) nextSleep() (time.Duration, bool) {
	var at time.Duration
	found := false
	for _, s := range rt.timers {
		t := s.t
		if t.done || t.a != nil && t.a.trip != "" {
			continue
		}
		if !found || t.at < at {
			at, found = t.at, true
		}
	}
	return at, found
}

// Why says why the actor at path cannot go now: it sleeps, waits for
// another actor, has ended, or there is no such actor. It is for a
// steerer whose choice is no candidate.
func (rt *Runtime) Why(path string) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var found *actor
	for _, a := range rt.all {
		if a.path() == path {
			found = a
			if a.state != exited {
				break
			}
		}
	}
	switch {
	case found == nil:
		return "no actor of the run is called " + path + " at this point"
	case found.state == exited:
		return "it has finished"
	case found.state == waiting:
		return "it is waiting for another actor"
	case found.timer != nil:
		return fmt.Sprintf("it is asleep until %v", found.timer.at)
	}
	return "it cannot go now"
}
