package lock_test

import (
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/locklab/locklab/lock"
)

func delays(p lock.Policy, n int) []time.Duration {
	b := lock.Retry{Policy: p, Base: 100 * time.Millisecond, Cap: time.Second, MaxRetries: n}.
		Backoff(mrand.New(mrand.NewPCG(1, 2)))
	var ds []time.Duration
	for {
		d, ok := b.Next()
		if !ok {
			return ds
		}
		ds = append(ds, d)
	}
}

func TestRetryPolicies(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	if got := delays(lock.RetryNone, 5); len(got) != 0 {
		t.Fatalf("none retried: %v", got)
	}
	if got := delays(lock.RetryFixed, 3); len(got) != 3 || got[0] != 100*ms || got[2] != 100*ms {
		t.Fatalf("fixed: %v", got)
	}
	want := []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}
	got := delays(lock.RetryExponential, 6)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("exponential: %v, want %v", got, want)
		}
	}
	for i, d := range delays(lock.RetryFullJitter, 200) {
		if hi := want[min(i, 5)]; d < 0 || d >= hi {
			t.Fatalf("full jitter retry %d: %v not in [0, %v)", i+1, d, hi)
		}
	}
	for i, d := range delays(lock.RetryEqualJitter, 200) {
		if hi := want[min(i, 5)]; d < hi/2 || d >= hi {
			t.Fatalf("equal jitter retry %d: %v not in [%v, %v)", i+1, d, hi/2, hi)
		}
	}
	prev := 100 * ms
	for i, d := range delays(lock.RetryDecorrelated, 200) {
		if d < 100*ms || d > time.Second || d >= max(3*prev, 100*ms+1) {
			t.Fatalf("decorrelated retry %d: %v (previous %v)", i+1, d, prev)
		}
		prev = d
	}
	if a, b := delays(lock.RetryFullJitter, 20), delays(lock.RetryFullJitter, 20); a[7] != b[7] {
		t.Fatal("same seed, different jitter")
	}
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"none", "fixed", "exponential", "full-jitter", "equal-jitter", "decorrelated-jitter", "jitter"} {
		if _, err := lock.ParsePolicy(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := lock.ParsePolicy("sometimes"); err == nil {
		t.Fatal("unknown policy accepted")
	}
}

func TestRetryZeroMaxRetriesNeverBacksOff(t *testing.T) {
	t.Parallel()
	for _, p := range lock.Policies {
		if got := delays(p.Name, 0); len(got) != 0 {
			t.Errorf("%s with --max-retries 0 backed off %d time(s): %v", p.Name, len(got), got)
		}
	}
}
