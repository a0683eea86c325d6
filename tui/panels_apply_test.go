package tui

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/tui/timeline"
)

// TestRetryPanelOnlyWhereARunCanRetry: the retry-delay histogram is shown
// where the run's workers retry under a retry policy, and not where they
// cannot retry at all — no policy nor limit to take (they poll at a fixed
// pace), a policy of none, or a strategy that never retries.
func TestRetryPanelOnlyWhereARunCanRetry(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		scenario, strategy string
		mod                func(*event.Params)
		want               bool
	}{
		{"crash", "safe", nil, true},
		{"retry", "fixed", nil, true},
		{"deadlock", "safe", nil, true},
		{"ttl-expiry", "safe", nil, true},
		{"oversell", "safe", func(p *event.Params) { p.Retry = "full-jitter" }, true},
		{"oversell", "safe", nil, false}, // --retry none: one attempt each
		{"oversell", "none", func(p *event.Params) { p.Retry = "fixed" }, false},
		{"crash", "safe", func(p *event.Params) { p.MaxRetries = 0 }, false},
		{"queue-double", "plain", nil, false},
		{"webhook", "none", nil, false},
		{"webhook", "fail-fast", nil, false},
		{"webhook", "safe", nil, true},
		{"redlock", "redlock", nil, false},
		{"leader", "watchdog", nil, false},
		{"cron", "release", nil, false},
	} {
		sc, err := scenario.Lookup(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		p := sc.Defaults
		if c.mod != nil {
			c.mod(&p)
		}
		h := event.Header{Scenario: c.scenario, Strategy: c.strategy, Params: p}
		if got := slices.Contains(panelsOf(h, timeline.New(1)), panelRetries); got != c.want {
			t.Errorf("%s/%s (retry %s, max %d): retry panel %v, want %v", c.scenario, c.strategy, p.Retry, p.MaxRetries, got, c.want)
		}
	}
}
