package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/lock"
)

var naiveFlaws = &Scenario{
	Name:  "naive-flaws",
	Speed: 0.2, // 2 s: 10 s
	Title: "Why SETNX + EXPIRE is unsafe",
	Watch: "lock A with no TTL after the crash; on lock B, w02's late DEL (⊘) freeing w03's lock and w04 walking in",
	Explain: "Two beats at once, on two locks. A: w00 crashes between SETNX and EXPIRE — the lock has no TTL " +
		"and w01 waits for it forever (until the run gives up). B: w02's lock lapses while it dawdles after its " +
		"work; w03 takes the lock; then w02 releases with an unconditional DEL — deleting w03's lock — and w04 " +
		"walks in while w03 is still inside. With safe the crash cannot leave a lock without a TTL, and w02's " +
		"release is refused: not its lock.",
	Source:     "the PHP + Redis locking lab, §2 (described there; here it happens)",
	Strategies: []string{"naive", "safe"},
	Defaults: withDefaults(func(p *Params) {
		p.Workers, p.TTL, p.Work = 5, Millis(500*time.Millisecond), Millis(300*time.Millisecond)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", Millis(50*time.Millisecond), 40
	}),
	Uses:  []string{"ttl", "work", "retry-base"},
	Cast:  5,
	run:   runNaiveFlaws,
	beats: naiveBeats,
}

func runNaiveFlaws(ctx context.Context, env *Env) error {
	env.Emit(Event{Kind: KindInit, Res: "A"})
	env.Emit(Event{Kind: KindInit, Res: "B"})
	ttl, work := env.Params.TTL.D(), env.Params.Work.D()
	base := env.Params.RetryBase.D()
	// poll retries every base for as long as wait.
	poll := func(wait time.Duration) lock.Retry {
		return lock.Retry{Policy: lock.RetryFixed, Base: base, MaxRetries: min(max(int(wait/base), 1), lock.MaxRetries)}
	}
	return env.Workers(ctx, 5, func(ctx context.Context, w *Worker) {
		var err error
		switch w.ID {
		case 0: // crashes right after SETNX
			w.Lock, err = env.NewLock(w, env.Strategy, lock.Retry{}, func(string) bool { return true })
			if err == nil {
				crashGap(ctx, env, w, ttl)
			}
		case 1: // waits for lock A
			w.Lock, err = env.NewLock(w, env.Strategy, poll(4*ttl), nil)
			if err == nil && w.Sleep(ctx, 50*time.Millisecond) == nil {
				holdFor(ctx, env, w, "A", 4*ttl, work, 0)
			}
		case 2: // holds B, finishes its work, releases late
			holdFor(ctx, env, w, "B", 0, work, ttl+ttl/2-work)
		case 3: // takes B once it lapsed, and works well within its TTL
			w.Lock, err = env.NewLock(w, env.Strategy, poll(4*ttl), nil)
			if err == nil && w.Sleep(ctx, ttl/5) == nil {
				holdFor(ctx, env, w, "B", 4*ttl, ttl*4/5, 0)
			}
		case 4: // arrives while w03 works
			w.Lock, err = env.NewLock(w, env.Strategy, poll(4*ttl), nil)
			if err == nil && w.Sleep(ctx, ttl+ttl/4) == nil {
				holdFor(ctx, env, w, "B", 4*ttl, work/2, 0)
			}
		}
		if err != nil {
			w.Done(false, FailError, err.Error())
		}
	})
}

// crashGap is w00: it takes lock A and dies before it can set a TTL (naive)
// or just after SET NX PX (safe); then the run reads the key's real TTL.
func crashGap(ctx context.Context, env *Env, w *Worker, ttl time.Duration) {
	key := env.Store.Key("lock:A")
	_, err := w.Lock.TryAcquire(ctx, key, ttl)
	switch {
	case errors.Is(err, lock.ErrCrashed):
	case err != nil:
		w.Fail(ctx, err, "lock A was taken")
		return
	}
	w.Crash("crashed right after taking lock A")
	pttl, err := env.Store.Client().PTTL(ctx, key).Result()
	switch {
	case err != nil:
		return
	case pttl < 0:
		env.Emit(Event{Kind: KindBeat, Res: "lock:A", Msg: "lock:A has no TTL (PTTL -1): it will never expire"})
	default:
		env.Emit(Event{Kind: KindBeat, Res: "lock:A", Msg: fmt.Sprintf("lock:A expires in %v: the crash costs one TTL", env.Clock().FromServer(pttl))})
	}
}

// holdFor acquires lock name (polling up to wait), works inside for work,
// lingers for late outside the critical section, then releases.
func holdFor(ctx context.Context, env *Env, w *Worker, name string, wait, work, late time.Duration) {
	key := env.Store.Key("lock:" + name)
	ttl := env.Params.TTL.D()
	var lease *lock.Lease
	var err error
	if wait > 0 {
		lease, err = w.Lock.Acquire(ctx, key, ttl)
	} else {
		lease, err = w.Lock.TryAcquire(ctx, key, ttl)
	}
	if err != nil {
		w.Fail(ctx, err, "gave up: lock "+name+" never came free")
		return
	}
	w.Emit(Event{Kind: KindWorkStart, Res: name})
	err = w.Sleep(ctx, work)
	w.Emit(Event{Kind: KindWorkEnd, Res: name})
	if err == nil && late > 0 {
		err = w.Sleep(ctx, late)
	}
	releaseQuietly(ctx, lease)
	if err != nil {
		w.Done(false, FailCancel, "interrupted")
		return
	}
	w.Done(true, "", "")
}
