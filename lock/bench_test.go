package lock_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
	"github.com/redis/go-redis/v9"
)

// cycleRuns counts BenchmarkCycle's runs, to rotate the order of the
// implementations between -count repetitions: on a small machine whatever
// runs first after the warm-up tends to run slower.
var cycleRuns atomic.Int64

// BenchmarkCycle is one acquire + release on a real redis-server, for
// locklab's safe lock and two well-known Go lock libraries, on the same
// server and client, at 1 and 32 concurrent workers.
func BenchmarkCycle(b *testing.B) {
	ctx := context.Background()
	client := benchClient(b)
	const ttl = 10 * time.Second

	impls := cyclers(ctx, client, ttl)
	rot := int(cycleRuns.Add(1)-1) % len(impls)
	impls = append(impls[rot:], impls[:rot]...)
	// Warm the server, the connections and the script caches for everyone
	// before measuring anyone.
	for range 3 {
		for _, impl := range impls {
			cycle := impl.new("bench:warmup:" + impl.name)
			for range 1000 {
				if err := cycle(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, workers := range []int{1, 32} {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("%s/workers=%d", impl.name, workers), func(b *testing.B) {
				var id atomic.Int64
				b.ReportAllocs()
				if workers == 1 {
					cycle := impl.new(fmt.Sprintf("bench:%s:%d", impl.name, id.Add(1)))
					for b.Loop() {
						if err := cycle(); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism((workers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
					b.RunParallel(func(pb *testing.PB) {
						cycle := impl.new(fmt.Sprintf("bench:%s:%d", impl.name, id.Add(1)))
						for pb.Next() {
							if err := cycle(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
			})
		}
	}
}

// benchClient starts a redis-server and returns the client locklab itself
// would use on it, shared by all three libraries.
func benchClient(b *testing.B) *redis.Client {
	srv := storetest.Start(b)
	st, err := store.Open(context.Background(), store.Config{URLs: []string{srv.URL}, PoolSize: 64})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st.Client().(*redis.Client)
}

type impl struct {
	name string
	new  func(key string) func() error // a cycle on key
}

// cyclers are the three lock libraries under comparison, on one client.
func cyclers(ctx context.Context, client *redis.Client, ttl time.Duration) []impl {
	return []impl{
		{"locklab-safe", func(key string) func() error {
			l := lock.NewSafe(client, lock.Options{})
			return func() error {
				lease, err := l.TryAcquire(ctx, key, ttl)
				if err != nil {
					return err
				}
				return lease.Release(ctx)
			}
		}},
		{"bsm-redislock", func(key string) func() error {
			l := redislock.New(client)
			return func() error {
				lk, err := l.Obtain(ctx, key, ttl, nil)
				if err != nil {
					return err
				}
				return lk.Release(ctx)
			}
		}},
		{"redsync", func(key string) func() error {
			rs := redsync.New(goredis.NewPool(client))
			m := rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1))
			return func() error {
				if err := m.LockContext(ctx); err != nil {
					return err
				}
				_, err := m.UnlockContext(ctx)
				return err
			}
		}},
	}
}

// BenchmarkCycleInterleaved runs the three libraries in short bursts, in
// rotating order, within each iteration, so that they share the machine's
// drift; it reports each one's rate and locklab's ratio to the others.
// Run with -benchtime 10x (ten rounds of bursts).
func BenchmarkCycleInterleaved(b *testing.B) {
	ctx := context.Background()
	impls := cyclers(ctx, benchClient(b), 10*time.Second)
	const burst = 100 * time.Millisecond
	for _, workers := range []int{1, 32} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			count := make([]int64, len(impls))
			spent := make([]time.Duration, len(impls))
			round := 0
			for b.Loop() {
				for k := range impls {
					i := (k + round) % len(impls)
					n, d := burstOf(b, impls[i], workers, burst)
					count[i] += n
					spent[i] += d
				}
				round++
			}
			rate := make([]float64, len(impls))
			for i := range impls {
				rate[i] = float64(count[i]) / spent[i].Seconds()
				b.ReportMetric(rate[i], impls[i].name+"-cycles/s")
			}
			b.ReportMetric(rate[0]/rate[1], "x-"+impls[1].name)
			b.ReportMetric(rate[0]/rate[2], "x-"+impls[2].name)
		})
	}
}

// burstOf runs workers goroutines cycling for d and counts the cycles.
func burstOf(b *testing.B, im impl, workers int, d time.Duration) (int64, time.Duration) {
	var n atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for w := range workers {
		cycle := im.new(fmt.Sprintf("bench:burst:%s:%d", im.name, w))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if err := cycle(); err != nil {
					b.Error(err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return n.Load(), time.Since(start)
}
