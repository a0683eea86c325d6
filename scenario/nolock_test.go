package scenario_test

import (
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// Whether a run takes a lock (and its rows say lock ✓ or ✗ rather than –)
// comes from its locks' traits, not from its strategy's name: cron's and
// trade-offs' ways take one, none and optimistic concurrency do not.
func TestNoLockComesFromTheTraits(t *testing.T) {
	for _, c := range []struct {
		sc, strategy string
		nolock       bool
	}{{"oversell", "none", true}, {"oversell", "redis-optimistic", true}, {"oversell", "atomic", true},
		{"oversell", "safe", false}, {"cron", "none", true}, {"cron", "release", false}, {"webhook", "idempotency", true},
		{"webhook", "safe", false}, {"trade-offs", "crash", false}, {"trade-offs", "pause", false}, {"retry", "fixed", false}} {
		s := scenario.Summarize(event.Header{Scenario: c.sc, Strategy: c.strategy}, check.Slice{})
		if s.NoLock() != c.nolock {
			t.Errorf("%s/%s: NoLock %v, want %v", c.sc, c.strategy, s.NoLock(), c.nolock)
		}
	}
}
