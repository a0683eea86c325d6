package check

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/lock"
)

// An undersold run's detail says which retry budget would have waited
// long enough at the pace it sold, from its own numbers; a run that sold
// its stock, or sold nothing, says no budget.
func TestUndersoldSaysWhichRetryBudgetWould(t *testing.T) {
	jitter := lock.Retry{Policy: lock.RetryFullJitter, Base: 100 * time.Millisecond, Cap: 5 * time.Second, MaxRetries: 10}
	s := &Summary{Successes: 3303, InitialStock: 10000, FailedLock: 6697, Duration: event.Millis(23021 * time.Millisecond),
		retry: "full-jitter", retryPol: retryOf{jitter}}
	d := s.undersoldDetail()
	// 6.97 ms a sale: 69.7 s for the stock, 87 s with a quarter to spare;
	// full jitter waits 0.05+0.1+0.2+0.4+0.8+1.6+2.5×k' s.
	for _, want := range []string{"A sale took 6.97ms", "~1m10s", "full-jitter's 10 retries wait 13.15s on average", "--max-retries 40 would"} {
		if !strings.Contains(d, want) {
			t.Errorf("detail %q\nlacks %q", d, want)
		}
	}
	if jitter.MeanWait(40) < 87*time.Second || jitter.MeanWait(39) >= 87*time.Second {
		t.Errorf("full jitter's mean waits: 39 retries %v, 40 retries %v; want 40 the first past 87 s", jitter.MeanWait(39), jitter.MeanWait(40))
	}
	none := &Summary{Successes: 1, InitialStock: 100, FailedLock: 99, Duration: event.Millis(6 * time.Millisecond), retry: "none",
		retryPol: retryOf{lock.Retry{Policy: lock.RetryNone, Base: 100 * time.Millisecond, Cap: 5 * time.Second, MaxRetries: 10}}}
	if d := none.undersoldDetail(); !strings.Contains(d, "add --retry full-jitter") || !strings.Contains(d, "this run did not retry") || !strings.Contains(d, "--retry full-jitter --max-retries") {
		t.Errorf("a run without retries: %q", d)
	}
	slow := &Summary{Successes: 1, InitialStock: 10000, FailedLock: 9999, Duration: event.Millis(time.Minute), retryPol: retryOf{jitter}}
	if d := slow.retryBudget(); !strings.Contains(d, "more than 1000 retries would: raise --retry-cap (now 5s)") {
		t.Errorf("a budget past the limit: %q", d)
	}
	for _, s := range []*Summary{{Successes: 0, InitialStock: 10, Duration: 1}, {Successes: 10, InitialStock: 10, Duration: 1}} {
		s.retryPol = retryOf{jitter}
		if d := s.retryBudget(); d != "" {
			t.Errorf("%d sold of %d: %q, want no budget", s.Successes, s.InitialStock, d)
		}
	}
}
