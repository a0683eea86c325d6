// Package bench measures lock strategies on their real servers: lock cycles
// per second and acquire latency (p50, p99, p999) at several numbers of
// concurrent workers, beside the server's plain SET rate as the ceiling a
// lock on that server can hope for.
//
// Each worker cycles on a key of its own (acquire, touch the protected value
// when the strategy keeps it, release), so a figure is the cost of the lock
// itself, not of queueing behind other holders.
package bench

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/lock"
	_ "github.com/locklab/locklab/lock/all" // registers the strategies beyond Redis
	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

// DefaultWorkers are the concurrencies measured unless told otherwise.
var DefaultWorkers = []int{1, 8, 32, 128}

// AutoPipelined is the suffix of a strategy measured through go-redis's
// AutoPipeline client instead of the plain one.
const AutoPipelined = "+autopipeline"

// ttl is every lease's TTL: far longer than a cycle, so nothing lapses.
const ttl = 10 * time.Second

// Config says what to measure.
type Config struct {
	// Store is the run's store: its Redis nodes and its other servers.
	Store *store.Store
	// Strategies to measure (Plan chooses them).
	Strategies []string
	// Workers are the concurrencies, each a cell.
	Workers []int
	// Duration is each cell's measured time; Warmup runs before it.
	Duration, Warmup time.Duration
	// AutoPipeline also measures SET and every Redis-key strategy through
	// go-redis's AutoPipeline client.
	AutoPipeline bool
	// Progress, if set, is told each cell before it is measured.
	Progress func(what string, workers int)
}

// Plan splits the strategies asked for (all but none when empty) into
// those the store can run and those it cannot, with the reason.
func Plan(st *store.Store, asked []string) (run []string, left []LeftOut) {
	if len(asked) == 0 {
		for _, s := range lock.All() {
			if s.Name != "none" {
				asked = append(asked, s.Name)
			}
		}
	}
	have := st.Servers()
	for _, name := range asked {
		info, _ := lock.Lookup(name)
		switch {
		case !have.Has(string(info.Server)):
			left = append(left, LeftOut{name, "needs " + store.Needs(string(info.Server))})
		case info.MultiNode() && len(st.Nodes()) < info.Nodes.Min:
			left = append(left, LeftOut{name, fmt.Sprintf("needs at least %d independent Redis nodes: give --redis once per node (%d given)", info.Nodes.Min, len(st.Nodes()))})
		default:
			run = append(run, name)
		}
	}
	return run, left
}

// Run measures every cell and returns the report. A strategy that fails
// to set up is left out with its error; a cell whose cycles fail keeps
// the error in the cell. ctx cancels the run.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	st := cfg.Store
	rep := &Report{Format: "locklab-bench", Version: 1, Store: st.Describe(),
		DurationMS: cfg.Duration.Milliseconds(), Workers: slices.Clone(cfg.Workers)}
	var aps []*redis.AutoPipeliner
	if cfg.AutoPipeline {
		for _, c := range st.Clients() {
			ap, err := c.AutoPipeline()
			if err != nil {
				return nil, fmt.Errorf("autopipeline: %w", err)
			}
			aps = append(aps, ap)
		}
		defer func() {
			for _, ap := range aps {
				ap.Close()
			}
		}()
	}
	plainSET := setMaker(st, st.Client())
	// measureAll measures a series; beside, each of its cells is preceded
	// by a shorter plain SET cell at the same concurrency, its own ceiling:
	// on a shared machine the load drifts between cells far apart.
	measureAll := func(name string, fresh maker, beside bool) (Series, error) {
		s := Series{Name: name, Server: string(lock.ServerRedis)}
		if info, ok := lock.Lookup(strings.TrimSuffix(name, AutoPipelined)); ok {
			s.Server = string(info.Server)
		}
		for _, w := range cfg.Workers {
			if cfg.Progress != nil {
				cfg.Progress(name, w)
			}
			var set Cell
			var err error
			if beside {
				set, err = measure(ctx, w, max(cfg.Duration/2, time.Millisecond), cfg.Warmup/2, plainSET(w))
			}
			c, err2 := measure(ctx, w, cfg.Duration, cfg.Warmup, fresh(w))
			if ctx.Err() != nil {
				return s, ctx.Err()
			}
			if err = errors.Join(err, err2); err != nil {
				return s, err
			}
			c.SetPerSec = set.PerSec
			s.Cells = append(s.Cells, c)
		}
		return s, nil
	}
	set, err := measureAll("SET", plainSET, false)
	if err != nil {
		return nil, err
	}
	rep.Ceiling = set
	if cfg.AutoPipeline {
		s, err := measureAll("SET"+AutoPipelined, setMaker(st, aps[0]), true)
		if err != nil {
			return nil, err
		}
		rep.CeilingAutoPipelined = &s
	}
	for _, name := range cfg.Strategies {
		s, err := measureAll(name, lockMaker(st, name, nil), true)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			rep.LeftOut = append(rep.LeftOut, LeftOut{name, err.Error()})
			continue
		}
		rep.Results = append(rep.Results, s)
		if cfg.AutoPipeline && RedisKey(name) {
			s, err := measureAll(name+AutoPipelined, lockMaker(st, name, aps), true)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				rep.LeftOut = append(rep.LeftOut, LeftOut{name + AutoPipelined, err.Error()})
				continue
			}
			rep.Results = append(rep.Results, s)
		}
	}
	rep.derive()
	return rep, nil
}

// RedisKey reports whether a strategy's lock is a Redis key taken through a
// go-redis client (what AutoPipeline can carry).
func RedisKey(strategy string) bool {
	return slices.ContainsFunc(lock.Strategies, func(r struct{ Name, Doc string }) bool { return r.Name == strategy && r.Name != "none" })
}

// cycle is one worker's lock cycle; it returns the time acquiring took.
type cycle func(ctx context.Context) (time.Duration, error)

// maker builds the cycles of a cell of w workers: worker i's cycle.
type maker func(w int) func(ctx context.Context, i int) (cycle, error)

// setMaker is the ceiling: a plain SET of a key of the worker's own.
func setMaker(st *store.Store, c redis.StringCmdable) maker {
	return func(w int) func(context.Context, int) (cycle, error) {
		return func(_ context.Context, i int) (cycle, error) {
			key := st.Key(fmt.Sprintf("bench:set:%d:%d", w, i))
			return func(ctx context.Context) (time.Duration, error) {
				t := time.Now()
				err := c.Set(ctx, key, "1", ttl).Err()
				return time.Since(t), err
			}, nil
		}
	}
}

// lockMaker cycles strategy name on keys of the workers' own; aps, if
// set, are the AutoPipeline clients of the Redis nodes to use instead of
// the plain ones.
func lockMaker(st *store.Store, name string, aps []*redis.AutoPipeliner) maker {
	info, _ := lock.Lookup(name)
	return func(w int) func(context.Context, int) (cycle, error) {
		return func(ctx context.Context, i int) (cycle, error) {
			o := lock.Options{Clock: st.Clock(), Rand: mrand.New(mrand.NewPCG(uint64(w), uint64(i)))}
			var l lock.Locker
			var err error
			if aps != nil {
				l, err = lock.New(name, lock.Clients(aps), o, nil)
			} else {
				l, err = lock.NewOn(name, servers(st), o, nil)
			}
			if err != nil {
				return nil, err
			}
			key := st.Key(fmt.Sprintf("bench:%s:%d:%d", name, w, i))
			if info.Cell {
				if err := putCell(ctx, st, l, key); err != nil {
					return nil, err
				}
			}
			return func(ctx context.Context) (time.Duration, error) {
				return lockCycle(ctx, l, key, info.Optimistic)
			}, nil
		}
	}
}

// lockCycle acquires key, bumps the protected value when the strategy
// keeps it, and releases. An optimistic strategy's acquire is its read.
func lockCycle(ctx context.Context, l lock.Locker, key string, optimistic bool) (time.Duration, error) {
	t := time.Now()
	lease, err := l.TryAcquire(ctx, key, ttl)
	if err != nil {
		return 0, err
	}
	acq := time.Since(t)
	if lease.Cell != nil {
		v, err := lease.Cell.Load(ctx)
		if err != nil {
			return 0, errors.Join(err, lease.Release(ctx))
		}
		if optimistic {
			acq = time.Since(t)
		}
		ok, err := lease.Cell.Store(ctx, v+1)
		if err == nil && !ok {
			err = fmt.Errorf("%s: the write was refused with no other writer", key)
		}
		if err != nil {
			return 0, errors.Join(err, lease.Release(ctx))
		}
	}
	return acq, lease.Release(ctx)
}

// putCell gives a strategy that keeps the protected value its value.
func putCell(ctx context.Context, st *store.Store, l lock.Locker, key string) error {
	if k, ok := l.(lock.CellKeeper); ok {
		return k.Cells().Put(ctx, key, 0)
	}
	return st.Client().Set(ctx, key, 0, 0).Err()
}

// servers are the store's servers as the strategies see them.
func servers(st *store.Store) lock.Servers {
	return lock.Servers{Redis: lock.Clients(st.Clients()), Dir: st.Dir,
		Conn:    func(k lock.Server) (any, error) { return st.Server(string(k)) },
		Cleanup: st.AtClose}
}
