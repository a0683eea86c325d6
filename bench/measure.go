package bench

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Phases of a cell: its workers warm up, are measured, stop.
const (
	warming int32 = iota
	measuring
	stopping
)

// measure runs w workers, each its own cycle, for warm then d (longer if
// too few cycles ended), and counts the cycles that end while measuring. A worker whose cycle fails stops;
// the cell keeps the first error.
func measure(ctx context.Context, w int, d, warm time.Duration, mk func(context.Context, int) (cycle, error)) (Cell, error) {
	cycles := make([]cycle, w)
	for i := range cycles {
		c, err := mk(ctx, i)
		if err != nil {
			return Cell{}, err
		}
		cycles[i] = c
	}
	var (
		phase    atomic.Int32
		counted  atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		samples  []time.Duration
		errs     int64
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, c := range cycles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			var err error
			for phase.Load() != stopping {
				var acq time.Duration
				if acq, err = c(ctx); err != nil {
					break
				}
				if phase.Load() == measuring {
					local = append(local, acq)
					counted.Add(1)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			samples = append(samples, local...)
			if err != nil && ctx.Err() == nil {
				errs++
				if firstErr == nil {
					firstErr = err
				}
			}
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
	phase.Store(measuring)
	wait(d)
	// A slow strategy under many workers may end no cycle in d: wait on
	// until each worker has ended one on average, up to 5×d.
	for t := d; counted.Load() < int64(w) && t < 5*d && ctx.Err() == nil; t += d / 10 {
		wait(d / 10)
	}
	phase.Store(stopping)
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		wg.Wait()
		return Cell{}, err
	}
	wg.Wait()
	cell := Cell{Workers: w, Cycles: int64(len(samples)), Failed: errs,
		PerSec: float64(len(samples)) / elapsed.Seconds()}
	if firstErr != nil {
		cell.Error = firstErr.Error()
	}
	slices.Sort(samples)
	cell.P50 = micros(quantile(samples, 0.50))
	cell.P99 = micros(quantile(samples, 0.99))
	cell.P999 = micros(quantile(samples, 0.999))
	return cell, nil
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
