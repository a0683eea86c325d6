package check

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/lock"
)

// retryOf is a run's retry policy, as its header gives it.
type retryOf struct{ lock.Retry }

// retryBudget says, for a run whose workers gave up on a busy lock while
// stock was left, how long the last buyer would have had to keep trying at
// the pace this run sold, and which --max-retries waits that long on
// average (full jitter's, when the run did not retry). An estimate from
// the run's own numbers, and worded as one; empty when there is nothing to
// go on.
func (s *Summary) retryBudget() string {
	r := s.retryPol.Retry
	if r.Policy == lock.RetryNone || r.Policy == "" {
		r.Policy, r.MaxRetries = lock.RetryFullJitter, 0
	}
	if s.Successes <= 0 || s.InitialStock <= int64(s.Successes) || s.Duration <= 0 {
		return ""
	}
	per := s.Duration.D() / time.Duration(s.Successes)
	need := per * time.Duration(s.InitialStock)
	have := fmt.Sprintf("%s's %d retries wait %s on average", r.Policy, r.MaxRetries, roundWait(r.MeanWait(r.MaxRetries)))
	if r.MaxRetries == 0 {
		have = "this run did not retry"
	}
	// A crowd that must wait minutes asks less often with a larger cap:
	// each retry then waits a sizeable share of the wait, and a buyer's
	// lock calls stay few however many buyers queue.
	capTo := ""
	if r.Policy != lock.RetryFixed {
		if c := min(roundUp125(min(need/4, maxRetryCap)), maxRetryCap); c > max(r.Cap, r.Base) {
			r.Cap, capTo = c, " --retry-cap "+c.String()
		}
	}
	// Twice the wait: the mean is what half the buyers fall short of, and
	// with a quarter to spare the last few dozen of 10,000 still gave up.
	k := 1
	for k <= lock.MaxRetries && r.MeanWait(k) < 2*need {
		k++
	}
	would := fmt.Sprintf("about --retry %s --max-retries %d%s would", r.Policy, k, capTo)
	switch {
	case k <= lock.MaxRetries:
	case capTo != "":
		would = fmt.Sprintf("more than %d retries would, even with%s", lock.MaxRetries, capTo)
	case r.Policy == lock.RetryFixed:
		would = fmt.Sprintf("more than %d retries would: raise --retry-base (now %s)", lock.MaxRetries, roundWait(r.Base))
	default:
		would = fmt.Sprintf("more than %d retries would: raise --retry-cap (now %s)", lock.MaxRetries, roundWait(r.Cap))
	}
	return fmt.Sprintf(" A sale took %s here, so the last of %d buyers had to keep trying ~%s; %s: %s (an estimate at this run's pace).",
		roundWait(per), s.InitialStock, roundWait(need), have, would)
}

// maxRetryCap is the largest --retry-cap a run takes.
const maxRetryCap = time.Hour

// roundUp125 rounds d up to 1, 2 or 5 times a power of ten, in whole
// seconds from a second up: 17.4s → 20s.
func roundUp125(d time.Duration) time.Duration {
	for step := time.Second; ; step *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if d <= m*step {
				return m * step
			}
		}
	}
}

// roundWait rounds a wait for reading: 7.04ms, 1m10s.
func roundWait(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
