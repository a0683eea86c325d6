package scenario

import (
	"slices"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
)

// Retries reports whether a run of sc with strategy and p can retry at
// all: a worker turned away backs off for a delay drawn from the run's
// retry policy and tries again, up to its retry limit — what a retry-delay
// histogram shows. A scenario that takes neither a policy (--retry) nor a
// limit (--max-retries) does not: its workers poll at a fixed interval
// (--retry-base), a pace rather than a policy. Nor does a run whose
// policy is none or whose limit is 0, nor a strategy that never retries.
func (sc *Scenario) Retries(strategy string, p event.Params) bool {
	policy, limit := slices.Contains(sc.Uses, "retry"), slices.Contains(sc.Uses, "max-retries")
	switch {
	case !policy && !limit, p.MaxRetries <= 0, slices.Contains(sc.noRetry, strategy):
		return false
	case policy:
		pol, err := lock.ParsePolicy(p.Retry)
		return err == nil && pol != lock.RetryNone
	}
	return true
}
