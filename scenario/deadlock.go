package scenario

import (
	"context"
	_ "embed"
	"encoding/hex"
	"errors"
	"slices"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/sim"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/acquire_all.lua
	acquireAllLua    string
	acquireAllScript = redis.NewScript(acquireAllLua)
)

var deadlock = &Scenario{
	Name:     "deadlock",
	Speed:    0.5,
	speedFor: deadlockSpeed, // 3.5 s: 7 s
	Title:    "Deadlock: a circular wait, broken by TTLs into an overlap",
	Watch:    "the wait-for graph closing into a ring, then the TTLs lapsing and both workers inside",
	Explain: "Each worker locks its own resource, then the next one's (w00 A→B, w01 B→A; with more " +
		"workers, a ring), holding the first while it polls for the second. The wait-for graph closes into a " +
		"cycle: deadlock. Then the first locks expire, each takes the other's lapsed lock, and both " +
		"\"complete\" while holding one resource each — two workers in the critical section. --order sorted " +
		"takes the locks in one global order (no cycle); all-at-once takes them in one atomic script.",
	Source:     "the PHP + Redis locking lab, §5 (its run looked fine; the overlap was real)",
	Strategies: []string{"safe", "naive", "fenced", "watchdog"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.TTL, p.Work, p.Order = 2, event.Millis(3*time.Second), event.Millis(500*time.Millisecond), "opposite"
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(100*time.Millisecond), 100
	}),
	Uses:  []string{"workers", "order", "ttl", "work", "retry-base", "max-retries"},
	run:   runDeadlock,
	beats: deadlockBeats,
}

// resourceName is the name of resource i: A, B, … Z, R26, …
func resourceName(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "R" + itoa(i)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func runDeadlock(ctx context.Context, env *Env) error {
	n := env.Params.Workers
	for i := range n {
		env.Emit(event.Event{Kind: event.KindInit, Res: resourceName(i)})
	}
	env.ring = newArrivals(n)
	return env.Workers(ctx, n, func(ctx context.Context, w *Worker) { ringWorker(ctx, env, w) })
}

// ringWorker is one worker of the ring: it takes its own resource, then
// the next lane's (the ring spans every process that races in the run).
func ringWorker(ctx context.Context, env *Env, w *Worker) {
	// The run's own watchdog: with locks that never lapse a deadlock lasts
	// forever; give up after three TTLs.
	limit := 3*env.Params.TTL.D() + time.Second
	n, i := env.Lanes(), int(env.Lane(w))
	first, second := resourceName(i), resourceName((i+1)%n)
	if n == 1 {
		second = first
	}
	switch env.Params.Order {
	case "sorted":
		if second < first {
			first, second = second, first
		}
	case "all-at-once":
		lockAll(ctx, env, w, []string{first, second}, limit)
		return
	}
	lockBoth(ctx, env, w, first, second, limit)
}

// lockBoth takes first, holds it, and polls for second.
func lockBoth(ctx context.Context, env *Env, w *Worker, first, second string, limit time.Duration) {
	st := env.Store
	ttl := env.Params.TTL.D()
	deadline := env.Clock().Now() + limit
	a, err := w.Lock.Acquire(ctx, st.Key("lock:"+first), ttl)
	// In the opposite order each worker's first resource is its own: the
	// ring closes once each holds it. A worker that starts late on a busy
	// machine must not find the next resource still free.
	ring := env.ring
	if env.Params.Order != "opposite" {
		ring = nil // the first resource is another's: waiting would be the deadlock
	}
	ring.arrive()
	if err != nil {
		w.Fail(ctx, err, "could not take "+first)
		return
	}
	defer releaseQuietly(ctx, a)
	// Hold the first while the others take theirs.
	if w.Sleep(ctx, env.Params.Work.D()) != nil {
		w.Done(false, check.FailCancel, "interrupted")
		return
	}
	ring.wait(ctx)
	var b *lock.Lease
	waitingFor := "-"
	for b == nil {
		b, err = w.Lock.TryAcquire(ctx, st.Key("lock:"+second), ttl)
		switch {
		case err == nil:
		case errors.Is(err, lock.ErrNotObtained):
			if h, on := env.waitOn(ctx, "lock:"+second); on != waitingFor {
				waitingFor = on
				w.waitFor("lock:"+second, h, on)
			}
			if env.Clock().Now() > deadline {
				w.Done(false, check.FailLock, "gave up waiting for "+second)
				return
			}
			w.Emit(event.Event{Kind: event.KindBackoff, Res: "lock:" + second, Delay: env.Params.RetryBase.D(), Has: event.HasDelay})
			if w.Sleep(ctx, env.Params.RetryBase.D()) != nil {
				w.Done(false, check.FailCancel, "interrupted")
				return
			}
		default:
			w.Fail(ctx, err, "")
			return
		}
	}
	defer releaseQuietly(ctx, b)
	work(ctx, env, w, []string{first, second})
}

// lockAll takes every resource in one atomic script, polling until it can.
func lockAll(ctx context.Context, env *Env, w *Worker, names []string, limit time.Duration) {
	st := env.Store
	slices.Sort(names)
	names = slices.Compact(names)
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = st.Key("lock:" + n)
	}
	var raw [16]byte
	for i := range raw {
		raw[i] = byte(w.Rand.Uint32())
	}
	tok := hex.EncodeToString(raw[:])
	ttl := env.Params.TTL.D()
	deadline := env.Clock().Now() + limit
	for attempt := int32(1); ; attempt++ {
		for _, k := range names {
			w.Emit(event.Event{Kind: event.KindAttempt, Res: "lock:" + k, Attempt: attempt, Has: event.HasAttempt})
		}
		call := w.Now()
		ok, err := acquireAllScript.Run(ctx, st.Client(), keys, tok, max(st.Clock().ToServer(ttl).Milliseconds(), 1)).Int()
		if err != nil {
			if ctx.Err() == nil {
				w.OpError("acquire", event.Event{Res: "lock:" + names[0]}, call, err)
			}
			w.Fail(ctx, err, "")
			return
		}
		if ok == 1 {
			break
		}
		for _, k := range names {
			w.Emit(event.Event{Kind: event.KindDenied, Res: "lock:" + k, Msg: "not all free"}.WithCall(call))
		}
		if env.Clock().Now() > deadline || w.Sleep(ctx, env.Params.RetryBase.D()) != nil {
			w.Done(false, check.FailLock, "gave up")
			return
		}
	}
	for _, k := range names {
		env.run.holders.set(tok, w.ID)
		w.Emit(event.Event{Kind: event.KindAcquired, Res: "lock:" + k, Token: tok, TTL: ttl, Has: event.HasTTL})
	}
	work(ctx, env, w, names)
	rctx, cancel := cleanup(ctx)
	defer cancel()
	for i, k := range keys {
		call := w.Now()
		n, err := lock.CompareAndDelete(rctx, st.Client(), k, tok)
		switch {
		case err != nil:
			w.OpError("release", event.Event{Res: "lock:" + names[i], Token: tok}, call, err)
		case n == 1:
			w.Emit(event.Event{Kind: event.KindRelease, Res: "lock:" + names[i], Token: tok}.WithOK(true).WithCall(call))
		default:
			w.Emit(event.Event{Kind: event.KindReleaseFailed, Res: "lock:" + names[i], Token: tok, Msg: "expired or not owner"}.WithOK(false).WithCall(call))
		}
	}
}

// work is the critical section over every resource held.
func work(ctx context.Context, env *Env, w *Worker, names []string) {
	for _, n := range names {
		w.Emit(event.Event{Kind: event.KindWorkStart, Res: n})
	}
	err := w.Sleep(ctx, env.Params.Work.D())
	for _, n := range names {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: n})
	}
	if err != nil {
		w.Done(false, check.FailCancel, "interrupted")
		return
	}
	w.Done(true, "", "")
}

func releaseQuietly(ctx context.Context, l *lock.Lease) {
	if crashed(ctx) {
		l.Abandon()
		return
	}
	rctx, cancel := cleanup(ctx)
	defer cancel()
	_ = l.Release(rctx)
}

// crashed reports whether ctx is a crashed worker's.
func crashed(ctx context.Context) bool { return errors.Is(context.Cause(ctx), lock.ErrCrashed) }

// cleanup is the context for what a worker does after its context ends
// (releasing its locks) — except a crashed worker's: a dead process cleans
// nothing up, so its context stays ended.
func cleanup(ctx context.Context) (context.Context, context.CancelFunc) {
	if crashed(ctx) {
		return context.WithCancel(ctx)
	}
	if rt := sim.Of(ctx); rt != nil {
		return clock.TimeoutOn(rt, context.WithoutCancel(ctx), 2*time.Second)
	}
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
}
