package sim_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/sim"
)

// BenchmarkStep is the scheduler's own cost: actors that only sleep, each
// sleep one step (a timer set, the turn passed on, time moved on). The
// whole run's cost per step, commands and events included, is
// scenario's BenchmarkSimulatedOversell10000.
func BenchmarkStep(b *testing.B) {
	for _, actors := range []int{2, 100, 10000} {
		b.Run(strconv.Itoa(actors)+" actors", func(b *testing.B) {
			c := clock.NewClock(1)
			rt := sim.New(1, nil)
			c.Simulate(rt)
			per := b.N/actors + 1
			b.ResetTimer()
			rt.Start(sim.Within(context.Background(), rt), "main", func(ctx context.Context) {
				g := clock.NewGroup(c)
				for i := range actors {
					g.Go(ctx, "a", func(ctx context.Context) {
						for range per {
							_ = c.Sleep(ctx, time.Duration(1+i%7)*time.Microsecond)
						}
					})
				}
				g.Wait(ctx)
			})
			<-rt.Done()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rt.Steps()), "ns/step")
		})
	}
}
