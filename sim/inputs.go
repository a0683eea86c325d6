package sim

import (
	"sort"
	"time"
)

// An input from outside the run (a fault a user pressed) lands where no
// actor can go on, at the simulated time then — which a view's pace may
// have moved past the last timer. Where that is, a Point says: after how
// many timers fired and how many steps were scheduled. DoAt makes a
// replay land an input there again.

// Point is a place in a run where inputs land.
type Point struct {
	Timers uint64 // timers fired so far
	Steps  uint64 // steps scheduled so far
}

// before reports whether p comes before q.
func (p Point) before(q Point) bool {
	return p.Timers < q.Timers || p.Timers == q.Timers && p.Steps < q.Steps
}

// planned is an input to run again where it landed.
type planned struct {
	at Point
	t  time.Duration
	f  func()
}

// DoAt runs f where an input given to Do landed before: at the first
// point where no actor can go on that is not before at, with the simulated
// time moved to t. Inputs for one point land in the order given. It is
// called before Start.
func (rt *Runtime) DoAt(at Point, t time.Duration, f func()) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.planned = append(rt.planned, planned{at, t, f})
	sort.SliceStable(rt.planned, func(i, j int) bool { return rt.planned[i].at.before(rt.planned[j].at) })
}

// Landing is where an input run now lands, and the simulated time then.
// An input calls it to say where it landed.
func (rt *Runtime) Landing() (Point, time.Duration) {
	return Point{rt.fired.Load(), rt.steps.Load()}, rt.Now()
}

// landPlanned runs the planned inputs due at this point, where no actor
// can go on. It reports whether it ran any. mu is held.
func (rt *Runtime) landPlanned() bool {
	ran := false
	here := Point{rt.fired.Load(), rt.steps.Load()}
	for len(rt.planned) > 0 && !here.before(rt.planned[0].at) {
		p := rt.planned[0]
		rt.planned = rt.planned[1:]
		if p.t > rt.Now() {
			rt.now.Store(int64(p.t))
		}
		rt.mu.Unlock()
		p.f()
		rt.mu.Lock()
		ran = true
	}
	return ran
}
