package bench

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/lock"
)

// maxFailsInARow stops a worker whose cycles keep failing (a server gone).
const maxFailsInARow = 10

// Phases of a cell: its workers warm up, are measured, stop.
const (
	warming int32 = iota
	measuring
	stopping
)

// measure runs w workers, each its own cycle, for warm then d (longer if
// too few cycles ended), and counts the cycles that end while measuring.
// An attempt the lock denies (on a key nobody else wants) is counted, not
// a cycle; a failed cycle is counted and the cell keeps the first error.
func measure(ctx context.Context, w int, d, warm time.Duration, mk func(context.Context, int) (cycle, error)) (burstResult, error) {
	cycles := make([]cycle, w)
	for i := range cycles {
		c, err := mk(ctx, i)
		if err != nil {
			return burstResult{}, err
		}
		cycles[i] = c
	}
	var b burst
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, c := range cycles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.work(ctx, c)
		}()
	}
	wait := func(d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	wait(warm)
	start := time.Now()
	b.phase.Store(measuring)
	wait(d)
	// A slow strategy under many workers may end no cycle in d: wait on
	// until each worker has ended one on average, up to 5×d.
	for t := d; b.counted.Load() < int64(w) && t < 5*d && ctx.Err() == nil; t += d / 10 {
		wait(d / 10)
	}
	b.phase.Store(stopping)
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		wg.Wait()
		return burstResult{}, err
	}
	wg.Wait()
	return burstResult{cycles: int64(len(b.samples)), failed: b.errs, denied: b.denied.Load(), firstErr: b.firstErr,
		perSec: float64(len(b.samples)) / elapsed.Seconds(), samples: b.samples}, nil
}

// burst is what a cell's workers share while they cycle: the phase they
// are in, the cycles and denials counted while measuring, and, once each
// is done, its samples, its failures and the first error among them.
type burst struct {
	phase    atomic.Int32
	counted  atomic.Int64
	denied   atomic.Int64
	mu       sync.Mutex
	samples  []time.Duration
	errs     int64
	firstErr error
}

// work cycles c until the burst stops (or too many cycles in a row
// fail), keeping the acquire latencies of the cycles that ended while
// measuring, then adds what it kept to the burst's.
func (b *burst) work(ctx context.Context, c cycle) {
	local := make([]time.Duration, 0, 1024)
	var failed, inARow int64
	var first error
	for b.phase.Load() != stopping && inARow < maxFailsInARow {
		acq, err := c(ctx)
		measured := b.phase.Load() == measuring
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, lock.ErrNotObtained):
			// Nobody else wants the key: the lock said no by itself
			// (Redlock's votes too slow for its validity).
			if measured {
				b.denied.Add(1)
			}
		case err != nil:
			inARow++
			failed++
			if first == nil {
				first = err
			}
		default:
			inARow = 0
			if measured {
				local = append(local, acq)
				b.counted.Add(1)
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.samples = append(b.samples, local...)
	b.errs += failed
	if b.firstErr == nil {
		b.firstErr = first
	}
}

// burstResult is one burst of a cell: its cycles, their acquire
// latencies, its rate.
type burstResult struct {
	cycles, failed, denied int64
	firstErr               error
	perSec                 float64
	samples                []time.Duration
}

// cellOf is a cell from its rounds: the medians and spread of its rates
// and of its ratios to the ceiling measured in the same round (ceil, "" if
// none), and the quantiles of every round's latencies.
func cellOf(w int, ceilName string, parts []burstResult, ceil []float64, samples []time.Duration) Cell {
	c := Cell{Workers: w, Rounds: len(parts), Ceiling: ceilName}
	var rates, ratios []float64
	for i, p := range parts {
		c.Cycles += p.cycles
		c.Failed += p.failed
		c.Denied += p.denied
		if c.Error == "" && p.firstErr != nil {
			c.Error = strings.ReplaceAll(p.firstErr.Error(), "\n", "; ")
		}
		rates = append(rates, p.perSec)
		s := Sample{PerSec: p.perSec}
		if i < len(ceil) {
			s.CeilingPerSec = ceil[i]
			if ceil[i] > 0 {
				ratios = append(ratios, p.perSec/ceil[i])
			}
		}
		c.Samples = append(c.Samples, s)
	}
	c.PerSec, c.Min, c.Max = spread(rates)
	if len(ceil) > 0 {
		c.CeilingPerSec, _, _ = spread(ceil)
	}
	if len(ratios) > 0 {
		c.Ratio, c.RatioMin, c.RatioMax = spread(ratios)
		c.Noise = c.Ratio > Bound
	}
	slices.Sort(samples)
	c.P50 = micros(quantile(samples, 0.50))
	c.P99 = micros(quantile(samples, 0.99))
	c.P999 = micros(quantile(samples, 0.999))
	return c
}

// Bound is the highest ratio of a lock cycle to its server's ceiling that
// can be true: a cycle takes at least one round trip (acquire), and
// mostly two (acquire, release), each at best as fast as the ceiling's one.
// A ratio above it is the machine's noise, not a result.
const Bound = 1.0

// spread is the median, least and greatest of xs (zeros if none).
func spread(xs []float64) (median, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Sorted(slices.Values(xs))
	median = s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return median, s[0], s[len(s)-1]
}

// quantile is the nearest-rank q-quantile of sorted samples (0 if none).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// micros is d in microseconds, to 0.1 µs.
func micros(d time.Duration) float64 { return float64(d/100) / 10 }
