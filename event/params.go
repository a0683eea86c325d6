package event

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/lock"
)

// Millis is a duration written to JSON as milliseconds.
type Millis time.Duration

// D is the duration.
func (m Millis) D() time.Duration { return time.Duration(m) }

// MarshalJSON writes milliseconds, with µs precision.
func (m Millis) MarshalJSON() ([]byte, error) { return appendMillis(nil, time.Duration(m)), nil }

// UnmarshalJSON reads milliseconds.
func (m *Millis) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("milliseconds: %w", err)
	}
	us := f*1000 + 0.5*sign(f)
	const most = float64(math.MaxInt64 / int64(time.Microsecond))
	if us > most || us < -most { // saturate: a conversion out of range is undefined
		*m = Millis(math.MaxInt64)
		if us < 0 {
			*m = Millis(math.MinInt64)
		}
		return nil
	}
	*m = Millis(time.Duration(us) * time.Microsecond)
	return nil
}

func sign(f float64) float64 {
	if f < 0 {
		return -1
	}
	return 1
}

// appendMillis writes d in milliseconds with at most three decimals.
func appendMillis(b []byte, d time.Duration) []byte {
	us := d.Microseconds()
	if us < 0 {
		b = append(b, '-')
		us = -us
	}
	b = strconv.AppendInt(b, us/1000, 10)
	if frac := us % 1000; frac != 0 {
		b = append(b, '.')
		digits := []byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
		for digits[len(digits)-1] == '0' {
			digits = digits[:len(digits)-1]
		}
		b = append(b, digits...)
	}
	return b
}

// Params are a run's parameters; each scenario uses the ones it needs and
// gives its own defaults.
type Params struct {
	Workers    int    `json:"workers"`
	Stock      int64  `json:"stock"`
	Delay      Millis `json:"delay_ms"`
	Work       Millis `json:"work_ms"`
	TTL        Millis `json:"ttl_ms"`
	Retry      string `json:"retry"`
	MaxRetries int    `json:"max_retries"`
	RetryBase  Millis `json:"retry_base_ms"`
	RetryCap   Millis `json:"retry_cap_ms"`
	Nodes      int    `json:"nodes"`
	Order      string `json:"order,omitempty"`
	Part       string `json:"part,omitempty"`  // Redlock: all, or one part's name
	Clock      string `json:"clock,omitempty"` // Redlock: how node 2's clock moves, jump or slew
}

// Lock orders of the deadlock scenario.
var Orders = []string{"opposite", "sorted", "all-at-once"}

// Limits of the parameters.
const (
	MaxWorkers    = 10000
	MaxRetryCount = 1000
	MaxNodes      = 15
)

// ParamError names the flag (parameter) at fault.
type ParamError struct {
	Param string // flag name without dashes: "workers"
	Msg   string
}

func (e *ParamError) Error() string { return fmt.Sprintf("--%s %s", e.Param, e.Msg) }

// Validate checks every parameter and names the first one that is wrong.
func (p Params) Validate() error {
	switch {
	case p.Workers < 1 || p.Workers > MaxWorkers:
		return &ParamError{"workers", fmt.Sprintf("must be between 1 and %d (got %d)", MaxWorkers, p.Workers)}
	case p.Stock < 0:
		return &ParamError{"stock", fmt.Sprintf("must be 0 or more (got %d)", p.Stock)}
	case p.Delay < 0 || p.Delay.D() > time.Hour:
		return &ParamError{"delay", fmt.Sprintf("must be between 0 and 1h (got %v)", p.Delay.D())}
	case p.Work < 0 || p.Work.D() > time.Hour:
		return &ParamError{"work", fmt.Sprintf("must be between 0 and 1h (got %v)", p.Work.D())}
	case p.TTL.D() < time.Millisecond || p.TTL.D() > 24*time.Hour:
		return &ParamError{"ttl", fmt.Sprintf("must be between 1ms and 24h (got %v)", p.TTL.D())}
	case p.MaxRetries < 0 || p.MaxRetries > MaxRetryCount:
		return &ParamError{"max-retries", fmt.Sprintf("must be between 0 and %d (got %d)", MaxRetryCount, p.MaxRetries)}
	case p.RetryBase.D() < time.Microsecond || p.RetryBase.D() > time.Hour:
		return &ParamError{"retry-base", fmt.Sprintf("must be between 1µs and 1h (got %v)", p.RetryBase.D())}
	case p.RetryCap.D() > time.Hour:
		return &ParamError{"retry-cap", fmt.Sprintf("must be at most 1h (got %v)", p.RetryCap.D())}
	case p.RetryCap < p.RetryBase:
		return &ParamError{"retry-cap", fmt.Sprintf("must be at least --retry-base %v (got %v)", p.RetryBase.D(), p.RetryCap.D())}
	case p.Nodes < 1 || p.Nodes > MaxNodes:
		return &ParamError{"nodes", fmt.Sprintf("must be between 1 and %d (got %d)", MaxNodes, p.Nodes)}
	}
	if p.Order != "" && !slices.Contains(Orders, p.Order) {
		return &ParamError{"order", fmt.Sprintf("%q is not an order: want one of %s", p.Order, strings.Join(Orders, ", "))}
	}
	if p.Part != "" && !slices.Contains(ChoiceNames(PartChoices()), p.Part) {
		return &ParamError{"part", fmt.Sprintf("%q is not a Redlock part: want one of %s", p.Part, partWords())}
	}
	if p.Clock != "" && !slices.Contains(ChoiceNames(ClockMoves), p.Clock) {
		return &ParamError{"clock", fmt.Sprintf("%q is not a way a clock moves: want one of %s", p.Clock, strings.Join(ChoiceNames(ClockMoves), ", "))}
	}
	if _, err := lock.ParsePolicy(p.Retry); err != nil {
		return &ParamError{"retry", fmt.Sprintf("%q is not a retry policy: want one of %s", p.Retry, lock.PolicyNames())}
	}
	return nil
}

// RetryPolicy is the lock retry policy the parameters describe.
func (p Params) RetryPolicy() lock.Retry {
	pol, _ := lock.ParsePolicy(p.Retry)
	return lock.Retry{Policy: pol, Base: p.RetryBase.D(), Cap: p.RetryCap.D(), MaxRetries: p.MaxRetries}
}

// Choice is one value a parameter may take, and what it means.
type Choice struct{ Name, Doc string }

// ChoiceNames lists the choices' names.
func ChoiceNames(cs []Choice) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// RedlockParts are the Redlock scenario's parts, in the order they run;
// --part all runs every one.
var RedlockParts = []Choice{
	{"quorum", "two of five nodes down: the quorum still grants; three down: denied"},
	{"clock", "node 2's clock moves past the TTL (--clock): two majorities at once"},
	{"failover", "node 2 fails over to a replica that missed the write: two holders"},
	{"pause", "a holder pauses past its validity: a stale holder writes beside the new one"},
	{"fence", "the same pause; the record checks fences issued by a majority: the stale write is rejected"},
	{"restart", "node 2 restarts without persistence: its copy of the key is gone, two holders"},
}

// ClockMoves are the ways node 2's clock moves in the Redlock clock part.
var ClockMoves = []Choice{
	{"jump", "forward by the TTL at once (Kleppmann's case)"},
	{"slew", "forward by the TTL gradually, over the TTL (antirez: slew, don't step)"},
}

// PartChoices are the values of --part: all, then each part.
func PartChoices() []Choice {
	return append([]Choice{{"all", "every part, in order"}}, RedlockParts...)
}

// partWords is "quorum, clock, …" for messages.
func partWords() string { return strings.Join(ChoiceNames(PartChoices()), ", ") }
