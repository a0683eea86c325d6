package scenario_test

import (
	"testing"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// --max-retries 0 means one attempt and no backoff, whatever the policy.
func TestMaxRetriesZeroMakesNoBackoff(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		p := oversellParams(func(p *event.Params) {
			p.Workers, p.Stock, p.Retry, p.MaxRetries = 8, 3, "fixed", 0
		})
		r := run(t, nil, scenario.Config{Scenario: "oversell", Strategy: "safe", Params: p, Seed: seed})
		if r.Header.Params.MaxRetries != 0 {
			t.Fatalf("header records max_retries %d", r.Header.Params.MaxRetries)
		}
		attempts := 0
		for _, e := range r.Log.Events() {
			switch e.Kind {
			case event.KindBackoff:
				t.Fatalf("seed %d: backoff with --max-retries 0: %+v", seed, e)
			case event.KindAttempt:
				attempts++
			}
		}
		if attempts != p.Workers {
			t.Fatalf("seed %d: %d attempts by %d workers, want one each", seed, attempts, p.Workers)
		}
	}
}
