package explore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/locklab/locklab/scenario"
)

// Row is one verdict class of a sweep.
type Row struct {
	Class     string
	Count     int
	Violation bool
	First     Outcome // the lowest seed that came to it
	// Seen counts its seeds whose tally shows overlaps or lost updates:
	// of a verdict that is no violation (a server's doubt, fencing) they
	// say what the checker saw all the same.
	Seen int
}

// Dist counts how many seeds came to each value of a count.
type Dist map[int]int

// Values are the dist's values, lowest first.
func (d Dist) Values() []int {
	vs := make([]int, 0, len(d))
	for v := range d {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// Result is what a sweep found: counts only, never the seeds' logs, so
// its memory does not grow with the number of seeds.
type Result struct {
	Asked       int
	Done        int
	Interrupted bool // stopped from outside before every seed ran
	Rows        []Row
	Overlaps    Dist
	Lost        Dist
	Sold        Dist // only when the scenario has a stock
	HasStock    bool
}

// Violations are the rows of broken locks, most frequent first.
func (r *Result) Violations() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Violation {
			out = append(out, row)
		}
	}
	return out
}

func (r *Result) add(o Outcome) {
	r.Done++
	r.Overlaps[o.Overlaps]++
	r.Lost[o.Lost]++
	if o.HasStock {
		r.HasStock = true
		r.Sold[o.Sold]++
	}
	seen := 0
	if o.Overlaps > 0 || o.Lost > 0 {
		seen = 1
	}
	for i := range r.Rows {
		if r.Rows[i].Class == o.Class {
			r.Rows[i].Count++
			r.Rows[i].Seen += seen
			if o.Seed < r.Rows[i].First.Seed {
				r.Rows[i].First = o
			}
			return
		}
	}
	r.Rows = append(r.Rows, Row{Class: o.Class, Count: 1, Violation: o.Violation, First: o, Seen: seen})
}

// Sweep runs base with n seeds from first on, jobs at a time, and calls
// progress (when set) after each. Stopped by ctx, it returns what the
// seeds that ended found, marked Interrupted.
func Sweep(ctx context.Context, base scenario.Config, first uint64, n, jobs int, progress func(done int)) (*Result, error) {
	res := &Result{Asked: n, Overlaps: Dist{}, Lost: Dist{}, Sold: Dist{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	outs := make(chan Outcome, jobs)
	var firstErr error
	var once sync.Once
	fail := func(err error) { once.Do(func() { firstErr = err; cancel() }) }
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				cfg := base
				cfg.Seed = first + uint64(i)
				o, err := Run(ctx, cfg, nil)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					return
				}
				outs <- o
			}
		}()
	}
	go func() { wg.Wait(); close(outs) }()
	for o := range outs {
		res.add(o)
		if progress != nil {
			progress(res.Done)
		}
	}
	if firstErr != nil {
		return res, firstErr
	}
	res.Interrupted = res.Done < n
	sort.SliceStable(res.Rows, func(i, j int) bool {
		if res.Rows[i].Count != res.Rows[j].Count {
			return res.Rows[i].Count > res.Rows[j].Count
		}
		return res.Rows[i].First.Seed < res.Rows[j].First.Seed
	})
	return res, nil
}

// IsRealTime reports whether err says the run cannot be simulated.
func IsRealTime(err error) bool {
	var rt *ErrRealTime
	return errors.As(err, &rt)
}
