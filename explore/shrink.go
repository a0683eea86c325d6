package explore

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// Shrinking tries each smaller case with the seed it has and a few more:
// a case with fewer workers interleaves differently, so the same seed
// rarely breaks it the same way, while a neighbour often does. The set of
// seeds is fixed, not the number of jobs, so the result is the same on
// any machine.
const (
	trySeeds   = 64 // seeds tried on a smaller case, batch by batch
	batch      = 8  // seeds run together; the first batch that breaks decides
	polishWith = 32 // seeds tried on the smallest case for the shortest log
	// Budget is the runs a shrink takes, unless told, before it settles
	// for what it has.
	Budget = 4000
)

// Options tune a shrink.
type Options struct {
	Jobs   int // runs at a time
	Budget int // runs in all, about (0: Budget)
	// Share is how often the sweep's seeds came to the class (0: unknown).
	// A smaller case is tried with about three times as many seeds as
	// take to meet it once at that rate, from one batch to trySeeds: a
	// story every seed tells is not searched for.
	Share float64
}

func (o Options) tries() int {
	if o.Share <= 0 {
		return trySeeds
	}
	n := int(math.Ceil(3/o.Share/batch)) * batch
	return min(max(n, batch), trySeeds)
}

// Shrunk is the smallest case found that still breaks the same way.
type Shrunk struct {
	Config  scenario.Config
	Outcome Outcome
	Trials  int // runs it took
}

// Shrink makes cfg, whose run came to class, as small as it can while its
// run still comes to class: fewer workers and less stock together, fewer
// workers, less stock, fewer and shorter
// faults, shorter delays and work, fewer retries — greedily, one change
// at a time, keeping each that still breaks. Last, among a few seeds of
// the smallest case, it keeps the one with the shortest log. It makes
// about o.Budget runs at most; stopped by ctx, it returns the smallest
// case so far.
func Shrink(ctx context.Context, cfg scenario.Config, class string, o Options) (Shrunk, error) {
	budget, jobs, tries := o.Budget, o.Jobs, o.tries()
	if budget <= 0 {
		budget = Budget
	}
	cur, err := Run(ctx, cfg, nil)
	if err != nil {
		return Shrunk{}, err
	}
	s := Shrunk{Config: cfg, Outcome: cur, Trials: 1}
	for s.Trials < budget && ctx.Err() == nil {
		moved := false
		for _, cand := range smaller(s.Config, s.Outcome) {
			got, ok, n, err := tryBatches(ctx, seedsFor(cand, s.Config.Seed, tries), class, jobs)
			s.Trials += n
			if err != nil {
				return s, err
			}
			if ok {
				s.Config, s.Outcome, moved = got.cfg, got.o, true
				break
			}
			if s.Trials >= budget {
				break
			}
		}
		if !moved {
			break
		}
	}
	if ctx.Err() != nil {
		return s, nil // what was found so far
	}
	got, ok, n, err := tryAll(ctx, seedsFor(s.Config, s.Config.Seed, polishWith), class, jobs, true)
	s.Trials += n
	if err == nil && ok && got.o.Events < s.Outcome.Events {
		s.Config, s.Outcome = got.cfg, got.o
	}
	return s, err
}

type trial struct {
	cfg scenario.Config
	o   Outcome
}

// seedsFor is cfg with its seed, then the seeds after it.
func seedsFor(cfg scenario.Config, seed uint64, n int) []scenario.Config {
	out := make([]scenario.Config, n)
	for i := range out {
		out[i] = cfg
		out[i].Faults = slices.Clone(cfg.Faults)
		out[i].Seed = seed + uint64(i)
	}
	return out
}

// tryBatches tries the cases a batch at a time and stops at the first
// batch where one breaks the same way.
func tryBatches(ctx context.Context, cases []scenario.Config, class string, jobs int) (trial, bool, int, error) {
	runs := 0
	for len(cases) > 0 && ctx.Err() == nil {
		b := cases[:min(batch, len(cases))]
		cases = cases[len(b):]
		got, ok, n, err := tryAll(ctx, b, class, jobs, false)
		runs += n
		if ok || err != nil {
			return got, ok, runs, err
		}
	}
	return trial{}, false, runs, nil
}

// tryAll runs the cases, jobs at a time, and returns the first (in the
// given order) whose run comes to class — or, shortest, the one with the
// fewest events. It reports how many runs it made.
func tryAll(ctx context.Context, cases []scenario.Config, class string, jobs int, shortest bool) (trial, bool, int, error) {
	outs := make([]*Outcome, len(cases))
	errs := make([]error, len(cases))
	sem := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			o, err := Run(ctx, c, nil)
			if err != nil {
				errs[i] = err
				return
			}
			outs[i] = &o
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return trial{}, false, len(cases), nil
	}
	best := -1
	for i, o := range outs {
		if errs[i] != nil {
			return trial{}, false, len(cases), errs[i]
		}
		if o == nil || o.Class != class {
			continue
		}
		if best < 0 || shortest && o.Events < outs[best].Events {
			best = i
		}
		if !shortest {
			break
		}
	}
	if best < 0 {
		return trial{}, false, len(cases), nil
	}
	return trial{cases[best], *outs[best]}, true, len(cases), nil
}

// smaller lists the cases one step smaller than cfg, boldest first.
func smaller(cfg scenario.Config, o Outcome) []scenario.Config {
	var out []scenario.Config
	with := func(f func(c *scenario.Config)) {
		c := cfg
		c.Faults = slices.Clone(cfg.Faults)
		f(&c)
		out = append(out, c)
	}
	p := cfg.Params
	cast := true
	if sc, err := scenario.Lookup(cfg.Scenario); err == nil && sc.Cast == 0 {
		cast = false
	}
	if !cast {
		for _, w := range fewer(p.Workers, 1) {
			with(func(c *scenario.Config) { c.Params.Workers = w })
		}
	}
	if o.HasStock {
		for _, s := range fewer(int(p.Stock), 1) {
			with(func(c *scenario.Config) { c.Params.Stock = int64(s) })
		}
	}
	if !cast && o.HasStock {
		// Workers and stock together, in the same proportion, once
		// neither alone still breaks: an oversell needs more buyers than
		// items, so fewer workers alone or less stock alone may stop
		// breaking where both at once still do.
		for _, w := range fewer(p.Workers, 1) {
			if st := max(int64(1), p.Stock*int64(w)/int64(max(p.Workers, 1))); st < p.Stock {
				with(func(c *scenario.Config) { c.Params.Workers, c.Params.Stock = w, st })
			}
		}
	}
	for i := range cfg.Faults {
		with(func(c *scenario.Config) { c.Faults = slices.Delete(c.Faults, i, i+1) })
	}
	for i, f := range cfg.Faults {
		if f.D > time.Millisecond {
			with(func(c *scenario.Config) { c.Faults[i].D = f.D / 2 })
		}
		if f.At > time.Millisecond {
			with(func(c *scenario.Config) { c.Faults[i].At = f.At / 2 })
		}
	}
	for _, d := range shorter(p.Delay.D()) {
		with(func(c *scenario.Config) { c.Params.Delay = event.Millis(d) })
	}
	for _, d := range shorter(p.Work.D()) {
		with(func(c *scenario.Config) { c.Params.Work = event.Millis(d) })
	}
	if p.Retry != "" && p.Retry != "none" {
		for _, n := range fewer(p.MaxRetries, 0) {
			with(func(c *scenario.Config) { c.Params.MaxRetries = n })
		}
	}
	return out
}

// fewer are smaller counts than n, down to least: the least, half, one less.
func fewer(n, least int) []int {
	var out []int
	for _, m := range []int{least, n / 2, n - 1} {
		if m >= least && m < n && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// shorter are shorter durations than d, in whole microseconds (a log's
// header keeps no finer): none, half.
func shorter(d time.Duration) []time.Duration {
	if d <= 0 {
		return nil
	}
	out := []time.Duration{0}
	if h := (d / 2).Truncate(time.Microsecond); h > 0 && h < d {
		out = append(out, h)
	}
	return out
}
