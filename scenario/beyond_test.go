package scenario_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// oversellSeeds runs oversell with strategy over seeds 1..n, a few at a
// time, each on a fresh store with the servers srv, and checks that no seed
// oversells, overlaps or loses an update, and that the stock left is the
// stock less what was sold.
func oversellSeeds(t *testing.T, strategy string, srv store.Servers, n int) {
	t.Helper()
	n = serverSeeds(t, n)
	p := oversellParams(func(p *event.Params) {
		p.Workers, p.Stock, p.Retry, p.MaxRetries = 8, 3, "full-jitter", 50
		p.RetryBase, p.RetryCap = event.Millis(2e6), event.Millis(20e6)
		// A TTL no stall of a busy machine outlasts: this is about exclusion
		// while the lock is held, not about expiry.
		p.TTL = event.Millis(60 * time.Second)
	})
	seeds := make(chan uint64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	sold := 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				s, err := oversellOnce(strategy, srv, p, seed)
				if err != nil {
					t.Errorf("seed %d: %v", seed, err)
					continue
				}
				mu.Lock()
				sold += s.Successes
				mu.Unlock()
				switch {
				case s.Oversold || s.Overlaps > 0 || s.LostUpdates > 0 || s.Successes > int(p.Stock):
					t.Errorf("seed %d: %s sold %d of %d, %d overlaps, %d lost updates", seed, strategy, s.Successes, p.Stock, s.Overlaps, s.LostUpdates)
				case s.FinalStock != p.Stock-int64(s.Successes):
					t.Errorf("seed %d: %s sold %d of %d but left %d", seed, strategy, s.Successes, p.Stock, s.FinalStock)
				case s.FailedError > 0:
					t.Errorf("seed %d: %s: %d workers failed with an error", seed, strategy, s.FailedError)
				}
			}
		}()
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	if sold == 0 {
		t.Errorf("%s sold nothing over %d seeds: the strategy never let anyone in", strategy, n)
	}
}

func oversellOnce(strategy string, srv store.Servers, p event.Params, seed uint64) (*check.Summary, error) {
	st, err := store.Open(context.Background(), store.Config{Nodes: 1, PoolSize: 16, Speed: 10, Servers: srv})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	r, err := scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: strategy, Params: p, Seed: seed})
	if err != nil {
		return nil, err
	}
	if err := r.Wait(); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return r.Summary(), nil
}

func TestOversellZeroSetupStrategies(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"flock", "semaphore", "redis-optimistic"} {
		t.Run(strategy, func(t *testing.T) { oversellSeeds(t, strategy, store.Servers{}, 100) })
	}
}

func TestOversellPostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts postgres")
	}
	pg := storetest.SharedPostgres(t)
	srv := store.Servers{Postgres: pg.URL}
	for _, strategy := range []string{"pg-advisory", "pg-advisory-xact", "pg-row", "pg-optimistic", "pg-table"} {
		// 4 seeds each (100 with LOCKLAB_DEEP=1): every run's workers are
		// new connections, and a Postgres connection is a process.
		t.Run(strategy, func(t *testing.T) { oversellSeeds(t, strategy, srv, 20) })
	}
}

func TestStrategyWithoutItsServer(t *testing.T) {
	st, err := store.Open(context.Background(), store.Config{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := oversellParams(nil)
	_, err = scenario.Start(context.Background(), st, scenario.Config{Scenario: "oversell", Strategy: "pg-advisory", Params: p, Seed: 1})
	want := "--lock pg-advisory needs --postgres URL or LOCKLAB_POSTGRES_URL"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestOversellMariaDB(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts mariadbd")
	}
	m := storetest.StartMariaDB(t)
	oversellSeeds(t, "mysql-get-lock", store.Servers{MySQL: m.URL}, 100)
}

func TestOversellMemcached(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts memcached")
	}
	m := storetest.StartMemcached(t)
	oversellSeeds(t, "memcached-add", store.Servers{Memcached: m.Addr}, 100)
}
