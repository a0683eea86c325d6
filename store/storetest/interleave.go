package storetest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Contender is one side of an interleaved comparison: New returns worker
// i's operation (one lock cycle, one command), run over and over.
type Contender struct {
	Name string
	New  func(i int) func() error
}

// Rounds are an interleaved comparison's rates, ops/s: Rate[c][r] is
// contender c in round r.
type Rounds struct {
	Names []string
	Rate  [][]float64
}

// Interleave runs each contender at workers concurrent workers for burst,
// one after the other (ABAB…, the order rotating each round so none is
// always first), once per iteration of b's loop, and returns every round's
// rate. Contenders that share a round share the machine's drift: on a
// loaded machine only their ratio within a round means anything.
func Interleave(b *testing.B, workers int, burst time.Duration, cs ...Contender) *Rounds {
	b.Helper()
	r := &Rounds{Rate: make([][]float64, len(cs))}
	ops := make([][]func() error, len(cs))
	for k, c := range cs {
		r.Names = append(r.Names, c.Name)
		for i := range workers {
			ops[k] = append(ops[k], c.New(i))
		}
		burstOf(b, ops[k], burst/4) // warm connections and caches
	}
	round := 0
	for b.Loop() {
		for j := range cs {
			k := (j + round) % len(cs)
			r.Rate[k] = append(r.Rate[k], burstOf(b, ops[k], burst))
		}
		round++
	}
	return r
}

// burstOf runs every op on its own goroutine for d and answers ops/s.
func burstOf(b *testing.B, ops []func() error, d time.Duration) float64 {
	var n atomic.Int64
	var failed sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for _, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if err := op(); err != nil {
					failed.Do(func() { b.Error(err) })
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// Median is the median of xs (0 if none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Ratio is the median over rounds of contender a's rate over b's rate
// times scale: each round's ratio, taken within the round.
func (r *Rounds) Ratio(a, b int, scale float64) float64 {
	var xs []float64
	for i := range r.Rate[a] {
		if i < len(r.Rate[b]) && r.Rate[b][i] > 0 {
			xs = append(xs, r.Rate[a][i]/(r.Rate[b][i]*scale))
		}
	}
	return Median(xs)
}

// Report reports every contender's median rate (name-ops/s) and
// x-bare: the median of contender 0's rate over the bare one's (index
// bare) times scale, round by round.
func (r *Rounds) Report(b *testing.B, bare int, scale float64) {
	b.Helper()
	for k, name := range r.Names {
		b.ReportMetric(Median(r.Rate[k]), name+"-ops/s")
	}
	b.ReportMetric(r.Ratio(0, bare, scale), "x-bare")
	b.ReportMetric(float64(len(r.Rate[0])), "rounds")
}

// Spread is min/median/max of contender k's ratio to bare over the rounds,
// for a log line.
func (r *Rounds) Spread(a, bare int, scale float64) string {
	var xs []float64
	for i := range r.Rate[a] {
		if i < len(r.Rate[bare]) && r.Rate[bare][i] > 0 {
			xs = append(xs, r.Rate[a][i]/(r.Rate[bare][i]*scale))
		}
	}
	if len(xs) == 0 {
		return "no rounds"
	}
	return fmt.Sprintf("%s ÷ %s: min %.2f median %.2f max %.2f over %d rounds", r.Names[a], r.Names[bare], slices.Min(xs), Median(xs), slices.Max(xs), len(xs))
}
