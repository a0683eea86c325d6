package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// BenchmarkEmit is what a worker pays for one event appended to a live log,
// checker included: the answer to an operation, carrying the time the
// operation was sent (its invoke stamp, which the worker read before
// sending), stamped by Emit with the time its answer arrived (return).
func BenchmarkEmit(b *testing.B) {
	l, clock, e := emitBench()
	e = e.WithCall(clock.Now())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		l.Emit(e)
	}
}

// BenchmarkEmitAndInvokeStamp is BenchmarkEmit with the worker's own read
// of the clock before each operation: all that recording an operation
// costs the worker, both clock reads included.
func BenchmarkEmitAndInvokeStamp(b *testing.B) {
	l, clock, e := emitBench()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		call := clock.Now() // Worker.Now, before the operation is sent
		l.Emit(e.WithCall(call))
	}
}

// BenchmarkClockNow is one read of the virtual clock: the invoke stamp.
func BenchmarkClockNow(b *testing.B) {
	clock := store.NewClock(1)
	var t time.Duration
	for b.Loop() {
		t += clock.Now()
	}
	_ = t
}

// emitBench is a log as a run has it, its narration all said, and a
// worker's answer to append to it.
func emitBench() (*event.Log, *store.Clock, event.Event) {
	sc, _ := scenario.Lookup("oversell")
	clock := store.NewClock(1)
	l := event.NewLog(clock, sc.Deriver("safe", sc.Defaults))
	l.Emit(event.Event{Worker: 3, Kind: event.KindAcquired, Res: "lock:stock"})
	l.Emit(event.Event{Worker: 3, Kind: event.KindWrite, Res: "stock"}) // the narration has said all
	return l, clock, event.Event{Worker: 3, Kind: event.KindDenied, Res: "lock:stock", Msg: "held", TTL: 5 * time.Second, Has: event.HasTTL}
}

// BenchmarkEmitParallel is Emit from many workers at once.
func BenchmarkEmitParallel(b *testing.B) {
	sc, _ := scenario.Lookup("oversell")
	l := event.NewLog(store.NewClock(1), sc.Deriver("safe", sc.Defaults))
	e := event.Event{Worker: 3, Kind: event.KindAttempt, Res: "lock:stock"}
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Emit(e)
		}
	})
}

// BenchmarkOversell1000 is a whole oversell run with 1000 workers on the
// embedded store, wall time per run.
func BenchmarkOversell1000(b *testing.B) {
	for _, strategy := range []string{"none", "safe"} {
		b.Run(strategy, func(b *testing.B) {
			for b.Loop() {
				st, err := store.Open(context.Background(), store.Config{PoolSize: 256})
				if err != nil {
					b.Fatal(err)
				}
				p := oversellParams(func(p *event.Params) { p.Workers = 1000 })
				r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: strategy, Params: p, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Wait(); err != nil {
					b.Fatal(err)
				}
				st.Close()
			}
		})
	}
}

// BenchmarkSimulatedOversell10000 is the simulation's worst case in the
// catalogue: 10,000 workers with a safe lock and full jitter, every command
// a step. It reports the wall time per scheduled step and per event.
func BenchmarkSimulatedOversell10000(b *testing.B) {
	var steps, events uint64
	for b.Loop() {
		st, err := store.Open(context.Background(), store.Config{})
		if err != nil {
			b.Fatal(err)
		}
		p := oversellParams(func(p *event.Params) {
			p.Workers, p.Stock, p.Retry, p.MaxRetries = 10000, 10000, "full-jitter", 30
		})
		r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "safe", Params: p, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Wait(); err != nil {
			b.Fatal(err)
		}
		steps += r.Steps()
		events += uint64(r.Log.Len())
		st.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
