package scenario

import (
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/store"
)

// Time as the log header tells it.
const (
	TimeSimulated = "simulated"
	timeReal      = "real time: "
	timeAsked     = timeReal + "asked for (--realtime)"
)

// simulation returns the runtime that schedules a run, or nil and why the
// run keeps real time. A run is simulated on the embedded store unless
// asked not to be, when its strategy's locks live in that store alone: a
// server that keeps its own time or goroutines (etcd, Postgres, a kernel's
// flock or semaphore), or workers in other processes, keep real time.
func simulation(st *store.Store, sc *Scenario, cfg Config, mode runMode) (*sim.Runtime, string) {
	if why := realTime(st.Kind(), sc, cfg, mode); why != "" {
		return nil, why
	}
	var pace *store.Clock
	if cfg.Paced {
		// The pace starts with the run, not when the store opened: the
		// first steps are shown at the pace too.
		pace = st.Clock()
		pace.StartAt(time.Now())
	}
	rt := sim.New(cfg.Seed, pace)
	// Connections in memory: one per worker at most is held at once (a
	// WATCH across steps), with room for the run's other actors.
	st.SimulateWith(rt, 2*cfg.Params.Workers+64)
	return rt, TimeSimulated
}

// realTime says why a run keeps real time, "" when it is simulated.
func realTime(kind store.Kind, sc *Scenario, cfg Config, mode runMode) string {
	switch {
	case sc.RealTime != "":
		return timeReal + sc.RealTime
	case kind != store.Embedded:
		return timeReal + "real servers keep their own time"
	case cfg.Realtime:
		return timeAsked
	case mode.guest || mode.hosted != nil || mode.outside != nil:
		return timeReal + "workers in other processes"
	case lock.WallClock(cfg.Strategy) != "":
		return timeReal + lock.WallClock(cfg.Strategy)
	case ServerOf(cfg.Strategy) != string(lock.ServerRedis):
		return timeReal + cfg.Strategy + " runs on " + ServerOf(cfg.Strategy) + ", which keeps its own time"
	}
	return ""
}

// KeepsRealTime reports whether a run of this scenario and configuration
// on a store of this kind keeps real time rather than being simulated.
func KeepsRealTime(kind store.Kind, sc *Scenario, cfg Config) bool {
	return realTime(kind, sc, cfg, runMode{}) != ""
}

// WallClock says why a strategy's runs keep real time although its locks
// live in Redis (a library that reads the wall clock); "" when they can be
// simulated.
func WallClock(strategy string) string { return lock.WallClock(strategy) }

// Simulated reports whether the run is a deterministic simulation.
func (r *Run) Simulated() bool { return r.rt != nil }

// Steps is how many steps the simulation has scheduled (0 in real time).
func (r *Run) Steps() uint64 {
	if r.rt == nil {
		return 0
	}
	return r.rt.Steps()
}
