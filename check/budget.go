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
	k := 1 // with a quarter to spare: the mean wait is what half the buyers fall short of
	for k <= lock.MaxRetries && r.MeanWait(k) < need+need/4 {
		k++
	}
	have := fmt.Sprintf("%s's %d retries wait %s on average", r.Policy, r.MaxRetries, roundWait(r.MeanWait(r.MaxRetries)))
	if r.MaxRetries == 0 {
		have = "this run did not retry"
	}
	would := fmt.Sprintf("about --retry %s --max-retries %d would", r.Policy, k)
	if k > lock.MaxRetries {
		would = fmt.Sprintf("more than %d retries would: raise --retry-cap (now %s)", lock.MaxRetries, roundWait(r.Cap))
	}
	return fmt.Sprintf(" A sale took %s here, so the last of %d buyers had to keep trying ~%s; %s: %s (an estimate at this run's pace).",
		roundWait(per), s.InitialStock, roundWait(need), have, would)
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
