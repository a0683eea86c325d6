package scenario

import (
	"context"
	"fmt"
	"slices"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
)

// lockServers are the run's servers as the lock strategies see them.
func (e *Env) lockServers() lock.Servers { return e.lockServersOf(-1) }

// lockServersOf are the servers as worker w's locks see them: on a node a
// network fault has reached in real time, through w's own links.
func (e *Env) lockServersOf(w int32) lock.Servers {
	st := e.Store
	return lock.Servers{Redis: lock.Clients(st.ClientsFor(w)), Dir: st.Dir,
		Conn:    func(k lock.Server) (any, error) { return st.Server(string(k)) },
		Cleanup: st.AtClose}
}

// NeedsServer says what to pass for a strategy whose server is not among
// have: "pg-advisory needs --postgres URL or LOCKLAB_POSTGRES_URL"; "" when
// the strategy has what it needs.
func NeedsServer(strategy string, have store.Servers) string {
	info, ok := lock.Lookup(strategy)
	if !ok || have.Has(string(info.Server)) {
		return ""
	}
	return fmt.Sprintf("%s needs %s", strategy, store.Needs(string(info.Server)))
}

// ServerOf names the server a strategy runs on ("redis" for the lock-free
// ones that use the run's Redis).
func ServerOf(strategy string) string {
	if info, ok := lock.Lookup(strategy); ok {
		return string(info.Server)
	}
	return string(lock.ServerRedis)
}

// checkServers refuses a strategy whose server the store was not given,
// and starts the run's embedded etcd before the run for the strategy that
// uses it (so the run's header names it, and a failure to start comes first).
func checkServers(st *store.Store, strategy string) error {
	if need := NeedsServer(strategy, st.Servers()); need != "" {
		return &event.ParamError{Param: "lock", Msg: need}
	}
	if ServerOf(strategy) == store.ServerEtcd {
		if _, err := st.Server(store.ServerEtcd); err != nil {
			return err
		}
	}
	if lockInfo(strategy).WallDeadlines {
		st.FollowWallClock() // its deadlines are the wall clock's (rueidislock's PXAT)
	}
	return nil
}

// beyondRedis lists the strategies whose lock is not a Redis key (and the
// optimistic one on Redis), in registry order: the scenarios that run with
// every lock add them.
func beyondRedis() []string {
	var out []string
	for _, s := range lock.All() {
		if s.Server != lock.ServerRedis || s.Cell {
			out = append(out, s.Name)
		}
	}
	return out
}

// libraries are the lock libraries registered as strategies on the run's
// Redis (lock/libs): redislock, redsync, redsync-quorum.
func libraries() []string {
	var out []string
	for _, s := range lock.All() {
		if s.Server == lock.ServerRedis && !s.Cell && !slices.ContainsFunc(lock.Strategies, func(o struct{ Name, Doc string }) bool { return o.Name == s.Name }) {
			out = append(out, s.Name)
		}
	}
	return out
}

// lockInfo describes a lock strategy (zero for lock-free ones).
func lockInfo(strategy string) lock.Info {
	info, _ := lock.Lookup(strategy)
	return info
}

// cellsOf returns where the strategy keeps the protected values, when it
// keeps them on a server of its own (pg-row's stock row); nil when they
// live in the run's Redis.
func (e *Env) cellsOf(strategy string) (lock.Cells, error) {
	if !lockInfo(strategy).Cell {
		return nil, nil
	}
	l, err := lock.NewOn(strategy, e.lockServers(), lock.Options{Clock: e.Clock()}, nil)
	if err != nil {
		return nil, err
	}
	if k, ok := l.(lock.CellKeeper); ok {
		return k.Cells(), nil
	}
	return nil, nil
}

// putStock sets the stock where the strategy reads it: the run's Redis,
// and the strategy's own server if it keeps the value there.
func (e *Env) putStock(ctx context.Context, cells lock.Cells, v int64) error {
	st := e.Store
	if err := st.Client().Set(ctx, st.Key("stock"), v, 0).Err(); err != nil {
		return err
	}
	if cells != nil {
		return cells.Put(ctx, st.Key("stock"), v)
	}
	return nil
}
