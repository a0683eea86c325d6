package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
)

var tradeOffs = &Scenario{
	Name:     "trade-offs",
	Speed:    0.5, // 1 s TTL, 3 s pauses: about 20 s
	RealTime: "Postgres and etcd keep their own time",
	Title:    "Redis, Postgres, etcd: the same holder crashes, or pauses",
	Watch:    "how long each store keeps the others out after w00, w02, w04 crash; who gets in during their pause, and whose stale write lands",
	Explain: "The lab's Redis-vs-database table, live on one seed. Three stores in turn, a holder and a waiter on each: " +
		"Redis (SET NX PX, --ttl), a Postgres session advisory lock (no TTL), etcd (a lease of --ttl; the key's " +
		"revision is the fence). crash: the holder dies holding the lock — Postgres ends its session and frees the " +
		"lock at once, Redis and etcd keep it until the TTL lapses. pause: the holder stops the world for --work — " +
		"Postgres' lock holds and the waiter waits it out (safe, not live); Redis' lock lapses and two workers are " +
		"inside, the stale write lands (live, not safe); etcd's lease lapses too, but the resource rejects the stale " +
		"revision (safe and live). Postgres needs --postgres URL; without it its column says so.",
	Source:     "the PHP + Redis locking lab's trade-off table; Kleppmann (use consensus with fencing)",
	Strategies: []string{"crash", "pause"},
	Defaults: withDefaults(func(p *event.Params) {
		p.TTL, p.Work = event.Millis(time.Second), event.Millis(3*time.Second)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(25*time.Millisecond), 1000
	}),
	Uses:    []string{"ttl", "work", "retry-base"},
	Cast:    2 * len(tradeStores),
	Slow:    []string{"pause"}, // three pauses of --work in turn
	run:     runTradeOffs,
	beats:   func(strategy string, p event.Params) []Beat { return tradeBeats(strategy, p, nil) },
	beatsOn: tradeBeats,
	notes:   tradeNotes,
	keyLocks: func() map[string]string {
		m := map[string]string{}
		for _, t := range tradeStores {
			m[t.lockKey()] = t.lock
		}
		return m
	}(),
}

// tradeStore is one column of the table: a store and the lock it offers.
type tradeStore struct {
	name  string // in resource and key names
	title string // in captions
	lock  string // the strategy
}

var tradeStores = []tradeStore{
	{"redis", "Redis", "safe"},
	{"postgres", "Postgres", "pg-advisory"},
	{"etcd", "etcd", "etcd"},
}

func (t tradeStore) res() string { return "data@" + t.name }

// lease is the TTL to ask t's lock for: none when it has none (Postgres'
// session lock lasts as long as the session).
func (t tradeStore) lease(p event.Params) time.Duration {
	if !lockInfo(t.lock).HasTTL() {
		return 0
	}
	return p.TTL.D()
}
func (t tradeStore) lockKey() string { return "lock:" + t.name }

// missing says why the run cannot fill t's column, or "" when it can.
func (t tradeStore) missing(have store.Servers) string {
	if _, ok := lock.Lookup(t.lock); !ok {
		return t.title + " is not in this build of locklab"
	}
	if NeedsServer(t.lock, have) != "" {
		return t.title + " is not configured: pass " + store.Needs(ServerOf(t.lock)) + " to fill its column"
	}
	return ""
}

// Wants says what to pass for the parts of sc's story that run on a
// server have lacks ("" when it has them all): they are left out, not
// failed.
func (sc *Scenario) Wants(have store.Servers) string {
	if sc != tradeOffs {
		return ""
	}
	var out []string
	for _, t := range tradeStores {
		if NeedsServer(t.lock, have) != "" {
			out = append(out, fmt.Sprintf("%s column: pass %s", t.title, store.Needs(ServerOf(t.lock))))
		}
	}
	return strings.Join(out, "; ")
}

// tradeSkipped is the code of the init event that says a column is empty.
const tradeSkipped = "skipped"

func runTradeOffs(ctx context.Context, env *Env) error {
	have, st := env.Store.Servers(), env.Store
	for _, t := range tradeStores {
		if err := st.Client().Set(ctx, st.Key(t.res()), 0, 0).Err(); err != nil {
			return err
		}
		env.Emit(event.Event{Kind: event.KindInit, Res: t.res()})
	}
	// The columns play one after the other: each starts once the one
	// before is over, so a busy machine cannot interleave their stories.
	over, left := make([]*cue, len(tradeStores)), make([]atomic.Int32, len(tradeStores))
	for i := range over {
		over[i] = newCue()
		left[i].Store(2)
	}
	// Within a column: the waiter comes once the holder has crashed or
	// paused; the holder's pause lasts --work and until the waiter has
	// been through, or (a lock without a TTL) was turned away after the
	// pause's planned end.
	fault, settled := make([]*cue, len(tradeStores)), make([]*signal, len(tradeStores))
	for i := range fault {
		fault[i], settled[i] = newCue(), newSignal()
	}
	return env.Workers(ctx, 2*len(tradeStores), func(ctx context.Context, w *Worker) {
		i := int(w.ID / 2)
		t, holder := tradeStores[i], w.ID%2 == 0
		defer func() {
			if left[i].Add(-1) == 0 { // both are through: the column is over
				over[i].give()
			}
		}()
		if holder {
			defer fault[i].give()
		}
		if i > 0 && over[i-1].wait(ctx) != nil {
			return
		}
		if msg := t.missing(have); msg != "" {
			if holder { // at the column's turn, so its beat comes in order
				env.Emit(event.Event{Kind: event.KindInit, Res: t.res(), Code: tradeSkipped, Msg: msg})
			}
			return
		}
		if !holder && fault[i].wait(ctx) != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
		l, err := env.NewLock(w, t.lock, env.Params.RetryPolicy(), nil)
		if err != nil {
			w.Fail(ctx, err, "")
			return
		}
		switch {
		case holder && env.Strategy == "crash":
			tradeCrash(ctx, env, w, t, l)
		case holder:
			tradePause(ctx, env, w, t, l, fault[i], settled[i])
		default:
			tradeWaiter(ctx, env, w, t, l, settled[i])
		}
	})
}

// tradeCrash is a holder that dies holding the lock: its process is gone,
// and with it its connection.
func tradeCrash(ctx context.Context, env *Env, w *Worker, t tradeStore, l lock.Locker) {
	lease, err := l.TryAcquire(ctx, env.Store.Key(t.lockKey()), t.lease(env.Params))
	if err != nil {
		w.Fail(ctx, err, "lock not obtained")
		return
	}
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: t.res()})
	lease.Abandon()
	w.Crash("crashed holding " + t.lockKey())
}

// tradePause is a holder that reads, stops the world, then writes what it
// read plus one, with its lock's fence if it has one.
func tradePause(ctx context.Context, env *Env, w *Worker, t tradeStore, l lock.Locker, paused *cue, settled *signal) {
	w.tap = func(e event.Event) {
		if e.Kind == event.KindPause {
			paused.give()
		}
	}
	lease, r, v, err := tradeEnter(ctx, env, w, t, l.TryAcquire)
	if lease == nil {
		return
	}
	if err == nil {
		err = w.PauseUntil(ctx, env.Params.Work.D(), settled.ch, "stop-the-world pause")
	}
	tradeLeave(ctx, w, t, r, lease, v, err)
}

// tradeWaiter wants the lock the holder has, and writes once it has it.
func tradeWaiter(ctx context.Context, env *Env, w *Worker, t tradeStore, l lock.Locker, settled *signal) {
	defer settled.give()
	// A lock that lapses (Redis, etcd) lets the waiter in once its TTL is
	// over on the server's own clock, however late that is on a busy
	// machine: the holder stays paused until then. A lock that holds
	// through the pause (Postgres) turns the waiter away; once the
	// holder's planned pause is over, the holder may go on.
	pausedAt := time.Duration(-1)
	if env.Strategy == "pause" && t.lease(env.Params) == 0 {
		pausedAt = w.Now()
	}
	w.tap = func(e event.Event) {
		if e.Kind == event.KindDenied && pausedAt >= 0 && w.Now() >= pausedAt+env.Params.Work.D() {
			settled.give()
		}
	}
	if lease, r, v, err := tradeEnter(ctx, env, w, t, l.Acquire); lease != nil {
		tradeLeave(ctx, w, t, r, lease, v, err)
	}
}

// tradeEnter takes t's lock with acquire and reads the resource inside it.
// A nil lease: the lock was not obtained, and w has failed.
func tradeEnter(ctx context.Context, env *Env, w *Worker, t tradeStore,
	acquire func(context.Context, string, time.Duration) (*lock.Lease, error)) (lease *lock.Lease, r *redlockRun, v int64, err error) {
	lease, err = acquire(ctx, env.Store.Key(t.lockKey()), t.lease(env.Params))
	if err != nil {
		w.Fail(ctx, err, "lock not obtained")
		return nil, nil, 0, err
	}
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: t.res()})
	r = &redlockRun{env: env}
	v, err = r.read(w, t.res())
	return lease, r, v, err
}

// signal is a cue a pause can wait on.
type signal struct {
	once sync.Once
	ch   chan bool
}

func newSignal() *signal { return &signal{ch: make(chan bool)} }

func (s *signal) give() { s.once.Do(func() { close(s.ch) }) }

// tradeLeave writes v+1 under lease (unless err), leaves and releases.
func tradeLeave(ctx context.Context, w *Worker, t tradeStore, r *redlockRun, lease *lock.Lease, v int64, err error) {
	ok := false
	if err == nil {
		ok, err = r.write(w, t.res(), lease.Fence, v+1)
	}
	w.Emit(event.Event{Kind: event.KindWorkEnd, Res: t.res()})
	releaseQuietly(ctx, lease)
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		w.Done(false, check.FailCancel, "interrupted")
	case err != nil:
		w.Fail(ctx, err, "")
	case !ok:
		w.Done(false, check.FailLock, "write rejected: stale fence")
	default:
		w.Done(true, "", "")
	}
}
