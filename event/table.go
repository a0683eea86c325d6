package event

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/lock"
)

// ParamKind is how a parameter is written.
type ParamKind int

// The kinds of parameter.
const (
	ParamCount    ParamKind = iota // a whole number: 10
	ParamDuration                  // a duration: 5ms, 2s, 1m30s
	ParamWord                      // one of its Choices: full-jitter
)

// Param is one of a run's parameters, named as its flag is. Params lists
// every one once: the command line's flags, a talk file's params, the
// view's form, `list` and shell completion all read them from there, so a
// parameter means the same wherever it is set.
type Param struct {
	Name string    // the flag's name: "max-retries"
	Kind ParamKind // how its value is written
	Help string    // the flag's help line
	Hint string    // the form's short hint beside the field
	// Choices are the words a ParamWord takes, for help and completion.
	Choices func() []string
	get     func(Params) string
	set     func(*Params, string) error
}

// Get is the parameter's value in p, written as Set reads it.
func (pa Param) Get(p Params) string { return pa.get(p) }

// Set reads text into the parameter in p. It checks how the value is
// written and, for a word, that it is one of the choices; Params.Validate
// checks the ranges.
func (pa Param) Set(p *Params, text string) error { return pa.set(p, strings.TrimSpace(text)) }

// Type is the kind as a flag's value type: int, duration or string.
func (pa Param) Type() string {
	switch pa.Kind {
	case ParamCount:
		return "int"
	case ParamDuration:
		return "duration"
	}
	return "string"
}

// ParamByName finds a parameter by its flag's name.
func ParamByName(name string) (Param, bool) {
	for _, pa := range ParamTable() {
		if pa.Name == name {
			return pa, true
		}
	}
	return Param{}, false
}

// ParamTable is every parameter of a run, in the order the form shows them.
func ParamTable() []Param {
	return []Param{
		count("workers", "concurrent workers", "concurrent workers", func(p *Params) *int { return &p.Workers }),
		{Name: "stock", Kind: ParamCount, Help: "initial stock", Hint: "initial stock",
			get: func(p Params) string { return strconv.FormatInt(p.Stock, 10) },
			set: func(p *Params, s string) (err error) { p.Stock, err = wholeNumber(s); return err }},
		duration("delay", "time between reading and writing the stock", "between read and write, e.g. 5ms", func(p *Params) *Millis { return &p.Delay }),
		duration("ttl", "lock TTL", "lock TTL, e.g. 5s", func(p *Params) *Millis { return &p.TTL }),
		{Name: "retry", Kind: ParamWord, Help: "retry policy: " + lock.PolicyNames(), Hint: lock.PolicyNames(), Choices: policyNames,
			get: func(p Params) string { return p.Retry },
			set: func(p *Params, s string) error {
				pol, err := lock.ParsePolicy(s) // also its short names: jitter, exp
				if err != nil {
					return fmt.Errorf("want one of %s (got %q)", lock.PolicyNames(), s)
				}
				p.Retry = string(pol)
				return nil
			}},
		count("max-retries", "retries after the first attempt", "retries after the first attempt", func(p *Params) *int { return &p.MaxRetries }),
		duration("retry-base", "base delay of the retry policy", "base delay, e.g. 100ms", func(p *Params) *Millis { return &p.RetryBase }),
		duration("retry-cap", "cap of the exponential retry policies", "cap, e.g. 5s", func(p *Params) *Millis { return &p.RetryCap }),
		count("nodes", "embedded Redis nodes (Redlock: default 5)", "Redis nodes (Redlock)", func(p *Params) *int { return &p.Nodes }),
		word("order", "deadlock: opposite, sorted or all-at-once", "opposite, sorted or all-at-once", func() []string { return Orders }, func(p *Params) *string { return &p.Order }),
		word("part", "redlock: the part to play: "+strings.Join(ChoiceNames(PartChoices()), ", "), orList(ChoiceNames(PartChoices())), func() []string { return ChoiceNames(PartChoices()) }, func(p *Params) *string { return &p.Part }),
		word("clock", "redlock: how node 2's clock moves: "+orList(ChoiceNames(ClockMoves)), orList(ChoiceNames(ClockMoves)), func() []string { return ChoiceNames(ClockMoves) }, func(p *Params) *string { return &p.Clock }),
		duration("work", "time a holder works inside the critical section", "time inside the critical section, e.g. 3s", func(p *Params) *Millis { return &p.Work }),
	}
}

func count(name, help, hint string, at func(*Params) *int) Param {
	return Param{Name: name, Kind: ParamCount, Help: help, Hint: hint,
		get: func(p Params) string { return strconv.Itoa(*at(&p)) },
		set: func(p *Params, s string) error {
			n, err := wholeNumber(s)
			// Out of range stays out of range for Validate to name,
			// whatever the width of int.
			*at(p) = int(min(max(n, math.MinInt32), math.MaxInt32))
			return err
		}}
}

func duration(name, help, hint string, at func(*Params) *Millis) Param {
	return Param{Name: name, Kind: ParamDuration, Help: help, Hint: hint,
		get: func(p Params) string { return at(&p).D().String() },
		set: func(p *Params, s string) error {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("want a duration such as 5ms, 2s or 1m (got %q)", s)
			}
			*at(p) = Millis(d)
			return nil
		}}
}

func word(name, help, hint string, choices func() []string, at func(*Params) *string) Param {
	return Param{Name: name, Kind: ParamWord, Help: help, Hint: hint, Choices: choices,
		get: func(p Params) string { return *at(&p) },
		set: func(p *Params, s string) error {
			for _, c := range choices() {
				if c == s {
					*at(p) = s
					return nil
				}
			}
			return fmt.Errorf("want one of %s (got %q)", strings.Join(choices(), ", "), s)
		}}
}

func wholeNumber(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a whole number (got %q)", s)
	}
	return n, nil
}

func policyNames() []string { return strings.Split(lock.PolicyNames(), ", ") }

// orList writes words as "a, b or c".
func orList(ws []string) string {
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
}
