package lock

import (
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"time"
)

// Policy names a retry policy. The jittered ones follow the formulas of the
// AWS Architecture Blog post "Exponential Backoff and Jitter".
type Policy string

// The retry policies.
const (
	RetryNone         Policy = "none"                // never retry
	RetryFixed        Policy = "fixed"               // base every time
	RetryExponential  Policy = "exponential"         // min(cap, base·2^(n−1))
	RetryFullJitter   Policy = "full-jitter"         // rand[0, exp)
	RetryEqualJitter  Policy = "equal-jitter"        // exp/2 + rand[0, exp/2)
	RetryDecorrelated Policy = "decorrelated-jitter" // min(cap, rand[base, prev·3))
	defaultRetryBase         = 100 * time.Millisecond
	defaultRetryCap          = 5 * time.Second
	// MaxRetries is the most retries a policy allows.
	MaxRetries = 1000
)

// Policies lists every policy with a one-line explanation, in order.
var Policies = []struct {
	Name Policy
	Doc  string
}{
	{RetryNone, "one attempt; a taken lock fails at once"},
	{RetryFixed, "retry every base (100ms): everyone retries in lockstep"},
	{RetryExponential, "base·2^(n−1), capped: spreads out, still in waves"},
	{RetryFullJitter, "random in [0, exponential): the AWS favourite"},
	{RetryEqualJitter, "half exponential + random half: never retries instantly"},
	{RetryDecorrelated, "random in [base, 3×previous), capped"},
}

// ParsePolicy accepts a policy name (and "jitter" for full-jitter,
// "exp" for exponential).
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(strings.ToLower(s)); p {
	case "jitter":
		return RetryFullJitter, nil
	case "exp":
		return RetryExponential, nil
	case "":
		return RetryNone, nil
	default:
		for _, q := range Policies {
			if q.Name == p {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("unknown retry policy %q: want one of %s", s, PolicyNames())
}

// PolicyNames lists the policies, comma-separated.
func PolicyNames() string {
	names := make([]string, len(Policies))
	for i, p := range Policies {
		names[i] = string(p.Name)
	}
	return strings.Join(names, ", ")
}

// Retry is a retry policy with its parameters.
type Retry struct {
	Policy     Policy
	Base       time.Duration // default 100ms
	Cap        time.Duration // default 5s
	MaxRetries int           // retries after the first attempt; 0 means none
}

// Backoff returns a fresh backoff sequence for one acquire.
func (r Retry) Backoff(rng *mrand.Rand) *Backoff {
	if r.Base <= 0 {
		r.Base = defaultRetryBase
	}
	if r.Cap <= 0 {
		r.Cap = defaultRetryCap
	}
	if r.Cap < r.Base {
		r.Cap = r.Base
	}
	return &Backoff{r: r, rng: rng, prev: r.Base}
}

// Backoff is the delay sequence of one acquire.
type Backoff struct {
	r    Retry
	rng  *mrand.Rand
	n    int
	prev time.Duration
}

// Next returns the delay before the next retry, or false when no retry is left.
func (b *Backoff) Next() (time.Duration, bool) {
	if b.r.Policy == RetryNone || b.r.Policy == "" || b.n >= b.r.MaxRetries {
		return 0, false
	}
	b.n++
	base, cap := b.r.Base, b.r.Cap
	exp := cap
	if b.n <= 40 {
		if e := base << (b.n - 1); e > 0 && e < cap {
			exp = e
		}
	}
	switch b.r.Policy {
	case RetryFixed:
		return base, true
	case RetryExponential:
		return exp, true
	case RetryFullJitter:
		return b.rand(0, exp), true
	case RetryEqualJitter:
		return exp/2 + b.rand(0, exp-exp/2), true
	case RetryDecorrelated:
		d := min(cap, b.rand(base, b.prev*3))
		b.prev = d
		return d, true
	}
	return 0, false
}

// rand is uniform in [lo, hi).
func (b *Backoff) rand(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(b.rng.Int64N(int64(hi-lo)))
}

// MeanWait is the mean of the delays of the first n retries under r: how
// long, on average, an acquire that is denied every time keeps trying.
// Decorrelated jitter's is taken along its mean path.
func (r Retry) MeanWait(n int) time.Duration {
	if r.Base <= 0 {
		r.Base = defaultRetryBase
	}
	if r.Cap < r.Base {
		r.Cap = max(r.Base, defaultRetryCap)
	}
	var sum time.Duration
	prev := r.Base
	for i := 1; i <= n; i++ {
		exp := r.Cap
		if i <= 40 {
			if e := r.Base << (i - 1); e > 0 && e < r.Cap {
				exp = e
			}
		}
		switch r.Policy {
		case RetryFixed:
			sum += r.Base
		case RetryExponential:
			sum += exp
		case RetryFullJitter:
			sum += exp / 2
		case RetryEqualJitter:
			sum += exp * 3 / 4
		case RetryDecorrelated:
			prev = min(r.Cap, (r.Base+prev*3)/2)
			sum += prev
		default:
			return 0
		}
	}
	return sum
}
