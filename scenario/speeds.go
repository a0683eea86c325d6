package scenario

import (
	"github.com/locklab/locklab/event"
)

// OpeningSpeed is the virtual clock's speed the interactive view opens a
// run of sc with strategy and p at: the one at which its story lasts 5 to
// 20 s on screen. A scenario declares one speed; where a strategy, a part
// or a lock order tells a story of another length, it says that one's
// (each measured on the default run of that story; a test keeps them true).
// A library that reads the wall clock opens at 1×: see KeepsOneX.
func (sc *Scenario) OpeningSpeed(strategy string, p event.Params) float64 {
	if KeepsOneX(strategy) != "" {
		return 1
	}
	if sc.speedFor != nil {
		if s := sc.speedFor(strategy, p); s > 0 {
			return s
		}
	}
	return sc.Speed
}

// KeepsOneX says why a run with strategy keeps the embedded clock at 1×
// ("" when it may take any speed): a library that reads the wall clock
// bounds its calls by deadlines of real time, which a faster or slower
// clock would not move, so at another pace it would give up sooner or
// later in the story than its TTL says (at 2× redislock takes late-grant's
// late answer, which at 1× it gives up on).
func KeepsOneX(strategy string) string {
	if WallClock(strategy) == "" {
		return ""
	}
	return strategy + " reads the wall clock: its deadlines do not follow the embedded clock's speed, so its runs keep 1×"
}

// oversellSpeed: the atomic script's fifty sales take about 0.5 ms.
func oversellSpeed(strategy string, _ event.Params) float64 {
	if strategy == "atomic" {
		return 0.00005
	}
	return 0
}

// deadlockSpeed: in order, the story is 1–2 s; with locks that renew
// themselves (a watchdog) the deadlock lasts until the retries run out,
// 10 s.
func deadlockSpeed(strategy string, p event.Params) float64 {
	switch {
	case p.Order == "all-at-once":
		return 0.1
	case p.Order == "sorted":
		return 0.2
	case lockInfo(strategy).Traits.Renews():
		return 1
	}
	return 0
}

// redlockSpeed: one part alone is a few hundred milliseconds to 1.5 s (a
// library that reads the wall clock keeps 1×: see OpeningSpeed).
func redlockSpeed(_ string, p event.Params) float64 {
	switch {
	case p.Part == "quorum":
		return 0.02
	case p.Part == "clock" && p.Clock == "slew", p.Part == "pause", p.Part == "fence":
		return 0.1
	case p.Part == "clock", p.Part == "failover", p.Part == "restart":
		return 0.05
	}
	return 0
}

// retrySpeed: jittered retries spread the workers in 0.2–0.3 s;
// exponential ones come back in waves for 50 s.
func retrySpeed(strategy string, _ event.Params) float64 {
	switch strategy {
	case "exponential":
		return 5
	case "full-jitter", "equal-jitter", "decorrelated-jitter":
		return 0.02
	}
	return 0
}
