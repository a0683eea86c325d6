// Package launch opens the store a run needs and starts the scenario on
// it: the one way the command line (run, run all, record, serve, bench)
// and the interactive view put a run on its servers. Where says where the
// keys live and how time goes, as the flags gave it; Start opens that
// store sized for the run and starts the run on it, or closes the store
// again when the run cannot start.
package launch

import (
	"context"
	"io"
	"time"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// Where is where a run's keys live and how its time goes.
type Where struct {
	URLs       []string      // real Redis servers; none: the embedded store
	Servers    store.Servers // the servers beyond Redis
	Topology   string        // servers to spawn for the run, if any
	Speed      float64       // the embedded clock's opening speed
	Slowmo     float64       // a real server's durations stretched
	ReplicaLag time.Duration // embedded nodes' replicas trail them by this much
	OpenWithin time.Duration // bounds opening the store (0: the run's context alone)
}

// MaxPool is the most connections a run gets on each node.
const MaxPool = 256

// Pool is the connection pool a run of workers gets on each node: one a
// worker, at least 10, at most MaxPool.
func Pool(workers int) int { return min(max(workers, 10), MaxPool) }

// Store is the store of a run with parameters p: its nodes, and a pool
// sized to its workers.
func (w Where) Store(p event.Params) store.Config {
	return store.Config{URLs: w.URLs, Nodes: p.Nodes, Speed: w.Speed, Slowmo: w.Slowmo, PoolSize: Pool(p.Workers),
		Servers: w.Servers, Topology: w.Topology, ReplicaLag: w.ReplicaLag}
}

// OpenError is a store that could not be opened: the server's words and
// a hint, never a password. A scenario that would not start is not one.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// Open opens the store of cfg, within OpenWithin when set.
func (w Where) Open(ctx context.Context, cfg store.Config) (*store.Store, error) {
	if w.OpenWithin > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.OpenWithin)
		defer cancel()
	}
	st, err := store.Open(ctx, cfg)
	if err != nil {
		return nil, &OpenError{err}
	}
	return st, nil
}

// Start opens the store for cfg's run and starts the run on it. events,
// when set, is asked for the writer of the run's event log once the store
// is open (so a store that cannot open leaves no file). When the run
// cannot start, the store is closed and the error returned as it is.
func Start(ctx context.Context, w Where, cfg scenario.Config, events func() (io.Writer, error)) (*scenario.Run, *store.Store, error) {
	scfg := w.Store(cfg.Params)
	if info, ok := lock.Lookup(cfg.Strategy); ok && info.WallDeadlines {
		scfg.WallTime = true
	}
	st, err := w.Open(ctx, scfg)
	if err != nil {
		return nil, nil, err
	}
	if events != nil {
		if cfg.Events, err = events(); err != nil {
			st.Close()
			return nil, nil, err
		}
	}
	run, err := scenario.Start(ctx, st, cfg)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return run, st, nil
}
