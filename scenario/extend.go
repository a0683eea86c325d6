package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/lock"
)

// extendLate is the extend-after-expiry story: a holder that extends its
// lock by hand before writing, after a pause that outlasted the TTL. What
// the extend answers, and whether the holder reads the answer, is all
// that differs between its ways.
var extendLate = &Scenario{
	Name:  "extend-late",
	Speed: 0.25, // 2.5 s: 10 s
	Title: "Extend after expiry: a renewal that succeeds on someone else's lock, or fails silently",
	Watch: "w00 waking past its TTL while w01 holds the lock, its extend's answer, and whether its write lands",
	Explain: "w00 takes the lock (--ttl 1s), reads the stock, and its process stops for longer than the TTL " +
		"(a laptop lid closed). The lock lapses and w01 takes it. w00 wakes and extends its lock before " +
		"writing, as the libraries' extend() and a hand-rolled renewal do. blind extends with a bare PEXPIRE: " +
		"it answers 1 — it has extended w01's lock — and w00 writes a stale stock. ignored extends only its own " +
		"token (compare-and-PEXPIRE, as redislock's Refresh and redsync's Extend do): it answers 0, but w00 " +
		"does not read the answer and writes anyway. checked reads the 0 and stops before writing: that is how " +
		"the holder could have known, and what it costs is its sale. The two were inside at once all the same " +
		"(w00 asleep mid-section): the check keeps the stale write out, not the overlap. redislock and redsync " +
		"take the library's own lock and extend it with the library's own call, Refresh and Extend, unmodified: " +
		"each returns an error (redislock's ErrNotObtained, redsync's false and ErrTaken), which w00 reads, as " +
		"checked does; neither says whether the lock lapsed or is another's.",
	Source:     "what the lock libraries' users report: node-redlock's extend after expiry, unchecked renewals",
	Strategies: []string{"blind", "ignored", "checked", "redislock", "redsync"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Stock, p.TTL, p.Work = 2, 2, event.Millis(time.Second), event.Millis(1500*time.Millisecond)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(100*time.Millisecond), 60
	}),
	Uses:   []string{"stock", "ttl", "work", "retry", "max-retries", "retry-base"},
	Cast:   2,
	run:    runExtendLate,
	beats:  extendBeats,
	lockOf: extendLock,
}

// extendLock is the lock a way of extend-late takes: a library's own for
// the ways that extend through it, safe for the others.
func extendLock(way string) string {
	if libraryExtends(way) {
		return way
	}
	return "safe"
}

// libraryExtends: the way is a lock strategy (a library's), which
// extends with its own call; the story's own ways are not strategies.
func libraryExtends(way string) bool { return isLock(way) }

// extendOwn is compare-and-PEXPIRE: the holder's token or nothing.
var extendOwn = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

func runExtendLate(ctx context.Context, env *Env) error {
	if err := initStock(ctx, env); err != nil {
		return err
	}
	holding := newCue()
	inside := make(chan bool) // closed once w01 holds the lock and has read
	settled := newCue()       // given once w00 has written or stopped
	err := env.Workers(ctx, 2, func(ctx context.Context, w *Worker) {
		// Every way but the libraries' takes a safe lock; they differ in
		// the extend.
		l, err := env.NewLock(w, extendLock(env.Strategy), env.Params.RetryPolicy(), nil)
		if err != nil {
			w.Fail(ctx, err, "")
			return
		}
		w.Lock = l
		if w.ID == 0 {
			defer settled.give()
			extendHolder(ctx, env, w, holding, inside)
			return
		}
		if holding.wait(ctx) != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
		extendWaiter(ctx, env, w, inside, settled)
	})
	return finalStock(ctx, env, err)
}

// extendHolder is w00: lock, read, a pause past the TTL, extend, write.
func extendHolder(ctx context.Context, env *Env, w *Worker, holding *cue, inside <-chan bool) {
	st := env.Store
	key := st.Key("lock:stock")
	ttl := env.Params.TTL.D()
	lease, err := w.Lock.Acquire(ctx, key, ttl)
	holding.give()
	if err != nil {
		w.Fail(ctx, err, "lock not obtained")
		return
	}
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: "stock"})
	v, ok := readStock(ctx, env, w)
	if !ok {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		releaseQuietly(ctx, lease)
		return
	}
	if err := w.PauseUntil(ctx, env.Params.Work.D(), inside, "the process stops past its TTL (a laptop lid closed)"); err != nil {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		releaseQuietly(ctx, lease)
		w.Done(false, check.FailCancel, "interrupted")
		return
	}
	if libraryExtends(env.Strategy) {
		libraryExtend(ctx, env, w, lease, v)
		return
	}
	call := w.Now()
	var n int64
	blind := env.Strategy == "blind"
	if blind {
		var b bool
		b, err = st.Client().PExpire(ctx, key, env.Store.Clock().ToServer(ttl)).Result()
		if b {
			n = 1
		}
	} else {
		n, err = extendOwn.Run(ctx, st.Client(), []string{key}, lease.Token, env.Store.Clock().ToServer(ttl).Milliseconds()).Int64()
	}
	if err != nil {
		w.OpError("renew", event.Event{Res: "lock:stock"}, call, err)
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		releaseQuietly(ctx, lease)
		w.Fail(ctx, err, "")
		return
	}
	extended(w, blind, n, lease.Token, ttl, call)
	if n != 1 && env.Strategy == "checked" {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		releaseQuietly(ctx, lease)
		w.Done(false, check.FailLock, "the extend answered 0: the lock is lost, so it stopped before writing")
		return
	}
	writeAndLeave(ctx, env, w, lease, v-1)
}

// libraryExtend is w00's extend through its lock library's own call,
// which records what it sent and returned; w00 reads the error it
// returns and stops before writing, as checked does.
func libraryExtend(ctx context.Context, env *Env, w *Worker, lease *lock.Lease, v int64) {
	if err := lease.Extend(ctx); err != nil {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		releaseQuietly(ctx, lease)
		if !errors.Is(err, lock.ErrNotHeld) {
			w.Fail(ctx, err, "")
			return
		}
		w.Done(false, check.FailLock, "the extend returned an error: the lock is lost, so it stopped before writing")
		return
	}
	writeAndLeave(ctx, env, w, lease, v-1)
}

// extended records w00's extend and its answer.
func extended(w *Worker, blind bool, n int64, tok string, ttl time.Duration, call time.Duration) {
	e := event.Event{Res: "lock:stock", Token: tok}.WithCall(call)
	switch {
	case blind && n == 1:
		e.Kind, e.Msg = event.KindRenewed, "PEXPIRE→1: a bare PEXPIRE compares no token, so it extended whoever holds lock:stock now"
		e.TTL, e.Has = ttl, e.Has|event.HasTTL
	case blind:
		e.Kind, e.Msg = event.KindRenewFailed, "PEXPIRE→0: the key is gone"
	case n == 1:
		e.Kind, e.Msg = event.KindRenewed, "EVALSHA→1: still its own token"
		e.TTL, e.Has = ttl, e.Has|event.HasTTL
	default:
		e.Kind, e.Msg = event.KindRenewFailed, "EVALSHA→0: the key is not its token (expired, or another's)"
	}
	w.Emit(e)
}

// extendWaiter is w01: it takes the lock once it lapses, and holds it
// (at least --work) until w00 has written or stopped.
func extendWaiter(ctx context.Context, env *Env, w *Worker, inside chan<- bool, settled *cue) {
	lease, err := w.Lock.Acquire(ctx, env.Store.Key("lock:stock"), env.Params.TTL.D())
	if err != nil {
		close(inside)
		w.Fail(ctx, err, "lock not obtained")
		return
	}
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: "stock"})
	v, ok := readStock(ctx, env, w)
	close(inside)
	if !ok {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		releaseQuietly(ctx, lease)
		return
	}
	if w.Sleep(ctx, env.Params.Delay.D()) != nil || settled.wait(ctx) != nil {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		releaseQuietly(ctx, lease)
		w.Done(false, check.FailCancel, "interrupted")
		return
	}
	writeAndLeave(ctx, env, w, lease, v-1)
}

func extendBeats(strategy string, p event.Params) []Beat {
	bs := []Beat{
		{"acquired", by(event.KindAcquired, 0), said(fmt.Sprintf("w00 holds the lock for %s and reads the stock.", ms(p.TTL.D())))},
		{"pause", by(event.KindPause, 0), said("w00's process stops: a laptop lid closed, a long GC. Its TTL runs on.")},
		{"taken", notBy(event.KindAcquired, 0), said("w00's TTL lapsed while it slept: w01 takes the lock and reads.")},
		{"resume", by(event.KindResume, 0), said("w00 wakes and extends its lock before writing.")},
	}
	switch {
	case libraryExtends(strategy):
		return append(bs, Beat{"extend", by(event.KindRenewFailed, 0), func(e event.Event) string {
			returned, _, _ := strings.Cut(e.Msg, ";")
			return fmt.Sprintf("%s's own extend: %s. w00 reads the error and stops before writing.", strategy, returned)
		}})
	case strategy == "blind":
		bs = append(bs, Beat{"extend", by(event.KindRenewed, 0), said("The bare PEXPIRE answers 1: w00 believes it still holds the lock — it has extended w01's.")})
	case strategy == "ignored":
		bs = append(bs, Beat{"extend", by(event.KindRenewFailed, 0), said("The extend answers 0 — and w00 does not read it: the failure is silent.")})
	default:
		return append(bs, Beat{"extend", by(event.KindRenewFailed, 0), said("The extend answers 0; w00 reads it and stops before writing. Its sale is lost, not the stock.")})
	}
	return append(bs, Beat{"stale-write", violation("lost_update"), checkerSays("A sale is lost. The checker: ")})
}
