// Package bench measures lock strategies on their real servers: lock cycles
// per second and acquire latency (p50, p99, p999) at several numbers of
// concurrent workers, each cell interleaved in rounds with its own server's
// ceiling (the cheapest round trip it offers: Redis SET, Postgres SELECT 1,
// MariaDB DO 1, memcached get, etcd Put), the rate no lock on that server
// can beat; figures are medians over the rounds, with their spread.
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
	// Duration is each cell's measured time, split over its rounds; its
	// ceiling gets as long again. Warmup runs before each burst, split
	// the same way.
	Duration, Warmup time.Duration
	// Rounds is how many times each cell and its server's ceiling are
	// measured, one after the other, alternating which goes first
	// (ABAB…): at least 1; a cell's figures are the rounds' medians.
	Rounds int
	// AutoPipeline also measures every Redis-key strategy through
	// go-redis's AutoPipeline client (its ceiling: SET through it).
	AutoPipeline bool
	// Version is locklab's, for the report.
	Version string
	// SafetyTTL, when set, runs the safety tests of every strategy with
	// that TTL before the cells (a few seconds: see Safety).
	SafetyTTL time.Duration
	// Need is what the closing "what to pick" ranks for: one of Needs.
	Need string
	// Progress, if set, is told each cell before it is measured.
	Progress func(Progress)
}

// Progress is where a run is: the cell about to be measured, of how many,
// and about how long the rest takes.
type Progress struct {
	What        string
	Workers     int
	Cell, Cells int // 1-based
	Left        time.Duration
}

// job is a series to measure: a strategy on a client, and its ceiling.
type job struct {
	name, server string
	fresh        maker
	ceil         ceiling
	hasCeil      bool
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

// Run measures every cell, each interleaved with its server's ceiling, and
// returns the report. A strategy that fails to set up is left out with its
// error; a cell whose cycles fail keeps the error in the cell. ctx cancels
// the run.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	st := cfg.Store
	cfg.Rounds = max(cfg.Rounds, 1)
	rep := &Report{Format: "locklab-bench", Version: 2, Store: st.Describe(), Env: environment(cfg.Version),
		DurationMS: cfg.Duration.Milliseconds(), Rounds: cfg.Rounds, Workers: slices.Clone(cfg.Workers)}
	var aps []store.Redis
	if cfg.AutoPipeline {
		var err error
		if aps, err = st.AutoPipelines(); err != nil {
			return nil, fmt.Errorf("autopipeline: %w", err)
		}
		defer func() {
			for _, ap := range aps {
				_ = ap.Close()
			}
		}()
	}
	var jobs []job
	for _, name := range cfg.Strategies {
		info, _ := lock.Lookup(name)
		if info.WallDeadlines {
			st.FollowWallClock() // its deadlines are the wall clock's (rueidislock's PXAT)
		}
		j := job{name: name, server: string(info.Server), fresh: lockMaker(st, name, nil)}
		j.ceil, j.hasCeil = ceilingOf(st, j.server, st.Client(), false)
		jobs = append(jobs, j)
		if cfg.AutoPipeline && RedisKey(name) {
			j := job{name: name + AutoPipelined, server: string(info.Server), fresh: lockMaker(st, name, aps)}
			j.ceil, j.hasCeil = ceilingOf(st, j.server, aps[0], true)
			jobs = append(jobs, j)
		}
	}
	if cfg.SafetyTTL > 0 {
		rep.Safety = measureSafety(ctx, st, cfg.Strategies, cfg.SafetyTTL)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	rep.Need = cfg.Need
	m := &meter{cfg: cfg, cells: len(jobs) * len(cfg.Workers), ceilings: map[ceilingKey][]float64{}}
	used := map[string]bool{}
	for _, j := range jobs {
		s, err := m.series(ctx, j)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			rep.LeftOut = append(rep.LeftOut, LeftOut{j.name, err.Error()})
			continue
		}
		used[j.server] = true
		rep.Results = append(rep.Results, s)
	}
	rep.Ceilings = m.ceilingSeries(cfg.Workers)
	rep.Env.Servers = serverVersions(ctx, st, used)
	rep.Env.LoadEnd, rep.Env.End = loadAverage(), time.Now().UTC().Format(time.RFC3339)
	rep.derive()
	return rep, nil
}

// ceilingKey is a ceiling at a concurrency.
type ceilingKey struct {
	name    string
	workers int
}

// meter measures the cells, keeping count for the progress and every
// round's ceiling rate.
type meter struct {
	cfg      Config
	cell     int
	cells    int
	ceilings map[ceilingKey][]float64
	order    []string // the ceilings' names, as first measured
}

// series measures a job at every concurrency.
func (m *meter) series(ctx context.Context, j job) (Series, error) {
	s := Series{Name: j.name, Server: j.server}
	for _, w := range m.cfg.Workers {
		m.cell++
		if m.cfg.Progress != nil {
			per := 2*m.cfg.Duration + m.cfg.Warmup*2
			m.cfg.Progress(Progress{What: j.name, Workers: w, Cell: m.cell, Cells: m.cells,
				Left: time.Duration(m.cells-m.cell+1) * per})
		}
		c, err := m.measureCell(ctx, w, j)
		if err != nil {
			return s, err
		}
		s.Cells = append(s.Cells, c)
	}
	return s, nil
}

// measureCell measures a job at w workers in rounds, each round the job
// and its ceiling one after the other, the first alternating.
func (m *meter) measureCell(ctx context.Context, w int, j job) (Cell, error) {
	rounds := m.cfg.Rounds
	burst := max(m.cfg.Duration/time.Duration(rounds), time.Millisecond)
	warm := m.cfg.Warmup / time.Duration(rounds)
	var (
		samples []time.Duration
		parts   []burstResult
		ceil    []float64
	)
	for r := range rounds {
		for k := range 2 {
			if (k+r)%2 == 0 { // the ceiling: first in even rounds
				if !j.hasCeil {
					continue
				}
				c, err := measure(ctx, w, burst, warm, j.ceil.make(w))
				if err == nil && c.firstErr != nil && c.cycles == 0 {
					err = fmt.Errorf("%s: %w", j.ceil.name, c.firstErr)
				}
				if err != nil {
					return Cell{}, err
				}
				ceil = append(ceil, c.perSec)
				continue
			}
			c, err := measure(ctx, w, burst, warm, j.fresh(w))
			if err != nil {
				return Cell{}, err
			}
			parts = append(parts, c)
			samples = append(samples, c.samples...)
		}
	}
	if j.hasCeil {
		key := ceilingKey{j.ceil.name, w}
		m.ceilings[key] = append(m.ceilings[key], ceil...)
		if !slices.Contains(m.order, j.ceil.name) {
			m.order = append(m.order, j.ceil.name)
		}
	}
	return cellOf(w, j.ceil.name, parts, ceil, samples), nil
}

// ceilingSeries are the ceilings measured, each at every concurrency, from
// all the rounds of every cell that had it, in the order first measured.
func (m *meter) ceilingSeries(workers []int) []Series {
	var out []Series
	for _, name := range m.order {
		s := Series{Name: name, Server: strings.Fields(name)[0]}
		for _, w := range workers {
			rates := m.ceilings[ceilingKey{name, w}]
			if len(rates) == 0 {
				continue
			}
			c := Cell{Workers: w, Rounds: len(rates)}
			c.PerSec, c.Min, c.Max = spread(rates)
			for _, r := range rates {
				c.Samples = append(c.Samples, Sample{PerSec: r})
			}
			s.Cells = append(s.Cells, c)
		}
		out = append(out, s)
	}
	return out
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
func lockMaker(st *store.Store, name string, aps []store.Redis) maker {
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
