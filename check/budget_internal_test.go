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
	// 6.97 ms a sale: 69.7 s for the stock, 139.4 s to wait twice that.
	// A quarter of the wait, 17.4 s, rounds up to a 20 s cap, under which
	// full jitter waits 0.05+0.1+…+6.4 = 12.75 s in 8 retries, then 10 s
	// a retry: 21 retries.
	for _, want := range []string{"A sale took 6.97ms", "~1m10s", "full-jitter's 10 retries wait 13.15s on average", "--max-retries 21 --retry-cap 20s would"} {
		if !strings.Contains(d, want) {
			t.Errorf("detail %q\nlacks %q", d, want)
		}
	}
	capped := jitter
	capped.Cap = 20 * time.Second
	if capped.MeanWait(21) < 139*time.Second || capped.MeanWait(20) >= 139*time.Second {
		t.Errorf("full jitter's mean waits under a 20 s cap: 20 retries %v, 21 retries %v; want 21 the first past 139 s", capped.MeanWait(20), capped.MeanWait(21))
	}
	// A short queue keeps the cap it has.
	short := &Summary{Successes: 30, InitialStock: 100, FailedLock: 70, Duration: event.Millis(210 * time.Millisecond), retryPol: retryOf{jitter}}
	if d := short.retryBudget(); strings.Contains(d, "--retry-cap") {
		t.Errorf("a 0.7 s queue under a 5 s cap: %q", d)
	}
	none := &Summary{Successes: 1, InitialStock: 100, FailedLock: 99, Duration: event.Millis(6 * time.Millisecond), retry: "none",
		retryPol: retryOf{lock.Retry{Policy: lock.RetryNone, Base: 100 * time.Millisecond, Cap: 5 * time.Second, MaxRetries: 10}}}
	if d := none.undersoldDetail(); !strings.Contains(d, "add --retry full-jitter") || !strings.Contains(d, "this run did not retry") || !strings.Contains(d, "--retry full-jitter --max-retries") {
		t.Errorf("a run without retries: %q", d)
	}
	// A wait of months under the largest cap, 1h (30 min a retry), needs
	// more retries than a run takes; fixed retries take no cap.
	slow := &Summary{Successes: 1, InitialStock: 100000, FailedLock: 9999, Duration: event.Millis(time.Hour), retryPol: retryOf{jitter}}
	if d := slow.retryBudget(); !strings.Contains(d, "more than 1000 retries would, even with --retry-cap 1h0m0s") {
		t.Errorf("a budget past the limit: %q", d)
	}
	fixed := &Summary{Successes: 1, InitialStock: 10000, FailedLock: 9999, Duration: event.Millis(time.Minute),
		retryPol: retryOf{lock.Retry{Policy: lock.RetryFixed, Base: 100 * time.Millisecond, MaxRetries: 10}}}
	if d := fixed.retryBudget(); !strings.Contains(d, "more than 1000 retries would: raise --retry-base (now 100ms)") {
		t.Errorf("fixed retries past the limit: %q", d)
	}
	for _, s := range []*Summary{{Successes: 0, InitialStock: 10, Duration: 1}, {Successes: 10, InitialStock: 10, Duration: 1}} {
		s.retryPol = retryOf{jitter}
		if d := s.retryBudget(); d != "" {
			t.Errorf("%d sold of %d: %q, want no budget", s.Successes, s.InitialStock, d)
		}
	}
}
