package sim

import "time"

// push sets a timer; mu is held.
func (rt *Runtime) push(at time.Duration, a *actor, f func()) *timer {
	rt.seq++
	t := &timer{at: at, seq: rt.seq, a: a, f: f}
	rt.timers.push(t)
	return t
}

// next is the earliest pending timer's time; mu is held.
func (rt *Runtime) next() (time.Duration, bool) {
	for len(rt.timers) > 0 && rt.timers[0].t.done {
		rt.timers.pop()
	}
	if len(rt.timers) == 0 {
		return 0, false
	}
	return rt.timers[0].at, true
}

// choose passes the turn: the goroutine that holds it (an actor that
// parks or ends, or the driver at the start) picks who goes next. The
// actor that chose itself goes on without a switch; any other choice is
// let go by the driver once the chooser has parked or ended.
func (rt *Runtime) choose() *actor {
	rt.mu.Lock()
	rt.running = nil
	a := rt.pick()
	rt.running = a
	rt.chosen = a
	rt.mu.Unlock()
	if a != nil {
		rt.steps.Add(1)
	}
	return a
}

// drive lets the chosen actors go, one after the other, until every actor
// has ended: then the run is over.
func (rt *Runtime) drive() {
	for a := rt.choose(); a != nil; a = rt.chosen {
		a.next()
	}
	close(rt.finished)
}

// pick chooses the next actor to go, advancing time as far as it takes;
// nil when every actor has ended. mu is held (and let go while it waits for
// the pace).
func (rt *Runtime) pick() *actor {
	for {
		rt.wake()
		if len(rt.runnable) == 0 && len(rt.planned) > 0 && rt.landPlanned() {
			rt.wake()
		}
		if len(rt.runnable) == 0 && len(rt.inbox) > 0 {
			// Inputs from outside land where nobody can go on: at an
			// instant that the next timer's would not share, so a
			// fault planned for it replays the same.
			rt.inputs()
			rt.wake()
		}
		if a, again := rt.steered(); a != nil {
			return a
		} else if again {
			continue
		}
		if n := len(rt.runnable); n > 0 {
			i := 0
			if n > 1 {
				i = rt.rng.IntN(n)
			}
			a := rt.runnable[i]
			rt.runnable[i] = rt.runnable[n-1]
			rt.runnable[n-1] = nil
			rt.runnable = rt.runnable[:n-1]
			a.state = ready
			return a
		}
		if rt.live == 0 {
			return nil
		}
		at, ok := rt.next()
		if !ok {
			err := rt.stuck()
			if rt.err == nil {
				rt.err = err
				if rt.onStuck != nil {
					f := rt.onStuck
					rt.mu.Unlock()
					f(err)
					rt.mu.Lock()
				}
				rt.dirty = true
				continue
			}
			// The run was ended and still nobody can go on: wait for
			// an input from outside.
			rt.mu.Unlock()
			<-rt.kick
			rt.mu.Lock()
			continue
		}
		if !rt.paced(at) {
			continue
		}
		rt.fire(at)
	}
}

// paced waits, when a pace is set, until the pace lets time reach at; it
// reports false when it stopped waiting for an input first. mu is held.
func (rt *Runtime) paced(at time.Duration) bool {
	if rt.pace == nil {
		return true
	}
	for {
		p := rt.pace.PaceNow()
		if p >= at {
			return true
		}
		if p > rt.Now() {
			rt.now.Store(int64(p)) // time moves on for whoever watches
		}
		speed := rt.pace.Speed()
		changed := rt.pace.Changed()
		rt.mu.Unlock()
		var tick <-chan time.Time
		var t *time.Timer
		if speed > 0 {
			wait := time.Duration(float64(at-p) / speed)
			t = time.NewTimer(min(max(wait, 0), 20*time.Millisecond))
			tick = t.C
		}
		input := false
		select {
		case <-tick:
		case <-changed:
		case <-rt.kick:
			input = true
		}
		if t != nil {
			t.Stop()
		}
		rt.mu.Lock()
		if input {
			return false
		}
	}
}

// fire moves time to at and fires every timer set for then. mu is held.
func (rt *Runtime) fire(at time.Duration) {
	rt.fired.Add(1)
	if at > rt.Now() {
		rt.now.Store(int64(at))
	}
	for len(rt.timers) > 0 && rt.timers[0].at <= at {
		t := rt.timers.pop()
		if t.done {
			continue
		}
		t.done = true
		switch {
		case t.a != nil:
			t.a.timer = nil
			rt.runnable = append(rt.runnable, t.a)
		case t.f != nil:
			rt.mu.Unlock()
			t.f()
			rt.mu.Lock()
		}
	}
}

// inputs runs what came from outside the run. mu is held.
func (rt *Runtime) inputs() {
	for len(rt.inbox) > 0 {
		in := rt.inbox
		rt.inbox = nil
		rt.mu.Unlock()
		for _, f := range in {
			f()
		}
		rt.mu.Lock()
	}
}

// wake makes runnable the waiting actors whose wait is over and, when a
// context may have ended, the sleeping actors whose context has. mu is
// held; ready functions are called without it.
func (rt *Runtime) wake() {
	if len(rt.waiters) > 0 {
		ws := rt.waiters
		rt.mu.Unlock()
		woke := make([]bool, len(ws))
		for i, a := range ws {
			woke[i] = a.wait.Err() != nil || a.ready()
		}
		rt.mu.Lock()
		kept := rt.waiters[:0]
		for i, a := range rt.waiters {
			if i < len(woke) && woke[i] {
				rt.runnable = append(rt.runnable, a)
				continue
			}
			kept = append(kept, a)
		}
		for i := len(kept); i < len(rt.waiters); i++ {
			rt.waiters[i] = nil
		}
		rt.waiters = kept
	}
	if !rt.dirty {
		return
	}
	rt.dirty = false
	for _, s := range rt.timers {
		t := s.t
		if t.done || t.a == nil || t.a.wait.Err() == nil {
			continue
		}
		t.done = true
		t.a.timer = nil
		rt.runnable = append(rt.runnable, t.a)
	}
}
