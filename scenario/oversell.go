package scenario

import (
	"context"
	_ "embed"
	"sync"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/buy.lua
	buyLua    string
	buyScript = redis.NewScript(buyLua)

	//go:embed scripts/fenced_write.lua
	fencedWriteLua    string
	fencedWriteScript = redis.NewScript(fencedWriteLua)
)

var oversell = &Scenario{
	Name:     "oversell",
	Speed:    0.001,
	speedFor: oversellSpeed, // the race is 5 ms of virtual time at this speed: 5 s
	Title:    "Oversell: lost updates on a stock counter",
	Watch:    "how many sales go through for the stock there is, and the lost updates",
	Explain: "Workers buy from a stock counter: lock, GET stock, wait --delay, SET stock−1, release. " +
		"Without a lock every worker reads the same stock before anyone writes it, so many sales go through " +
		"for one item and the counter never notices: the updates are lost, the stock never goes negative. " +
		"A correct lock sells exactly the stock; without --retry it may undersell, because the losers give up.",
	Source:     "the PHP + Redis locking lab, §1–3",
	Strategies: []string{"none", "naive", "safe", "fenced", "watchdog", "redlock", "atomic", "redislock", "redsync", "redsync-quorum", "rueidislock"},
	more:       beyondRedis,
	noRetry:    []string{"none", "atomic"}, // nothing to be turned away by
	Defaults:   baseDefaults,
	Uses:       []string{"workers", "stock", "delay", "ttl", "retry", "max-retries", "retry-base", "retry-cap", "nodes"},
	run:        runOversell,
	beats:      oversellBeats,
}

func runOversell(ctx context.Context, env *Env) error {
	cells, err := env.cellsOf(env.Strategy)
	if err != nil {
		return err
	}
	if err := env.putStock(ctx, cells, env.Params.Stock); err != nil {
		return err
	}
	env.Emit(event.Event{Kind: event.KindInit, Res: "stock"}.WithStock(env.Params.Stock))
	err = env.Workers(ctx, env.Params.Workers, func(ctx context.Context, w *Worker) {
		buy(ctx, env, w)
	})
	return finalCellStock(ctx, env, cells, err)
}

// buy is one worker's purchase attempt.
func buy(ctx context.Context, env *Env, w *Worker) {
	st := env.Store
	c := st.Client()
	stock := st.Key("stock")
	if w.Lock == nil { // atomic: the check and the decrement are one script
		call := w.Now()
		res, err := buyScript.Run(ctx, c, []string{stock}).Int64Slice()
		if err != nil {
			if ctx.Err() == nil {
				w.OpError("write", event.Event{Res: "stock"}, call, err)
			}
			w.Fail(ctx, err, "")
			return
		}
		if res[0] == 0 {
			w.Emit(event.Event{Kind: event.KindRead, Res: "stock"}.WithStock(res[1]).WithCall(call))
			w.Done(false, check.FailStock, "out of stock")
			return
		}
		w.Emit(event.Event{Kind: event.KindWrite, Res: "stock"}.WithStock(res[1]).WithOK(true).WithCall(call))
		w.Done(true, "", "")
		return
	}
	if info := lockInfo(env.Strategy); info.Cell {
		buyCell(ctx, env, w, info)
		return
	}

	lease, err := w.Lock.Acquire(ctx, st.Key("lock:stock"), env.Params.TTL.D())
	if err != nil {
		w.Fail(ctx, err, "lock not obtained")
		return
	}
	release := func() { releaseQuietly(ctx, lease) }
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: "stock"})
	v, ok := readStock(ctx, env, w)
	if !ok {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		release()
		return
	}
	if v < 1 {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		release()
		w.Done(false, check.FailStock, "out of stock")
		return
	}
	if err := env.Clock().Sleep(lease.Context(), env.Params.Delay.D()); err != nil {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		release()
		w.Fail(ctx, context.Cause(lease.Context()), "")
		return
	}
	writeAndLeave(ctx, env, w, lease, v-1)
}

// readStock reads the stock counter as w; on an error it records the
// operation's outcome and w's end, and returns false.
func readStock(ctx context.Context, env *Env, w *Worker) (int64, bool) {
	st := env.Store
	call := w.Now()
	v, err := st.Client().Get(ctx, st.Key("stock")).Int64()
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("read", event.Event{Res: "stock"}, call, err)
		}
		w.Fail(ctx, err, "")
		return 0, false
	}
	w.Emit(event.Event{Kind: event.KindRead, Res: "stock"}.WithStock(v).WithCall(call))
	return v, true
}

// writeAndLeave writes the new stock, leaves the critical section, releases
// and records the outcome.
func writeAndLeave(ctx context.Context, env *Env, w *Worker, lease *lock.Lease, v int64) {
	ok, err := write(ctx, env, w, lease, v)
	w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
	releaseQuietly(ctx, lease)
	switch {
	case err != nil:
		w.Fail(ctx, err, "")
	case !ok:
		w.Done(false, check.FailLock, "write rejected: stale fence")
	default:
		w.Done(true, "", "")
	}
}

// write stores the new stock; with a fenced lock the resource checks the
// fence and may reject the write.
func write(ctx context.Context, env *Env, w *Worker, lease *lock.Lease, v int64) (bool, error) {
	st := env.Store
	call := w.Now()
	if lease.Fence == 0 {
		if err := st.Client().Set(ctx, st.Key("stock"), v, 0).Err(); err != nil {
			if ctx.Err() == nil {
				w.OpError("write", event.Event{Res: "stock"}.WithStock(v), call, err)
			}
			return false, err
		}
		w.Emit(event.Event{Kind: event.KindWrite, Res: "stock"}.WithStock(v).WithOK(true).WithCall(call))
		return true, nil
	}
	n, err := fencedWriteScript.Run(ctx, st.Client(), []string{st.Key("stock"), st.Key("stock:fence")}, lease.Fence, v).Int64()
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("write", event.Event{Res: "stock"}.WithStock(v).WithFence(lease.Fence), call, err)
		}
		return false, err
	}
	if n == 0 {
		w.Emit(event.Event{Kind: event.KindFenceRejected, Res: "stock"}.WithFence(lease.Fence).WithCall(call))
		w.Emit(event.Event{Kind: event.KindWrite, Res: "stock"}.WithStock(v).WithOK(false).WithCall(call))
		return false, nil
	}
	w.Emit(event.Event{Kind: event.KindFenceOK, Res: "stock"}.WithFence(lease.Fence).WithCall(call))
	w.Emit(event.Event{Kind: event.KindWrite, Res: "stock"}.WithStock(v).WithOK(true).WithCall(call))
	return true, nil
}

// scriptsNamed gives the run's Lua scripts their names on the wire
// (store.NameScript), once, before the first run starts.
var scriptsNamed sync.Once

func nameScripts() { scriptsNamed.Do(nameScriptsOnce) }

func nameScriptsOnce() {
	store.NameScript(buyScript, "buy")
	store.NameScript(fencedWriteScript, "fenced-write")
	for s, name := range lock.ScriptNames() {
		store.NameScript(s, name)
	}
}
