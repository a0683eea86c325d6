package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
)

// lateGrant is the lease lost while waiting: a holder whose lock was
// granted at once but who hears of it only after the TTL, the reply held
// up on its link. What it does with the time the wait took is all that
// differs between its ways.
var lateGrant = &Scenario{
	Name:  "late-grant",
	Speed: 0.25, // 1.5 s: 6 s
	Title: "A lease lost while waiting: the grant heard of after its TTL",
	Watch: "w00's acquire answered only after the TTL, w01 inside meanwhile, and whether w00 trusts the late grant",
	Explain: "w00 asks for the lock (--ttl 1s); the server sets it at once, but the answer is held up on w00's " +
		"link for 1.5×TTL (a slow network, a stalled process). The lock lapses before w00 hears it has it, and " +
		"w01 takes it. trust: w00 takes the grant at its word, enters and writes — two holders, a lost sale. " +
		"validity: w00 counts from when it sent the request, as Redlock's validity does (TTL − time taken): the " +
		"grant came back after the TTL, so it held nothing, and w00 stays out and asks again. That is how it could " +
		"have known; what it costs is a clock read, and a second wait for the lock. redislock and redsync " +
		"take the library's own lock with its own acquire, unmodified, one try under the slow link, and neither " +
		"trusts the late grant, each by a deadline of its own on the wall clock: redislock's Obtain waits at most " +
		"the TTL from its call, so the grant it would take is never older than its TTL (a grant just inside it " +
		"would come with almost nothing left); redsync waits for each node 5% of the expiry, then sends its " +
		"delete, and asks again — each try under the slow link sets the key anew, so w01 is kept out by locks " +
		"nobody holds until the link recovers. Both are logged as acquires the library gave up on.",
	Source:     "what the lock libraries' users report: a lease lost while waiting (Curator, etcd's mutex); Redlock's validity",
	Strategies: []string{"trust", "validity", "redislock", "redsync"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Stock, p.TTL = 2, 2, event.Millis(time.Second)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(100*time.Millisecond), 60
	}),
	Uses:  []string{"stock", "ttl", "retry", "max-retries", "retry-base"},
	Cast:  2,
	run:   runLateGrant,
	beats: lateGrantBeats,
	// The run says when the slow link begins and ends, around the beats.
	headings: func(strategy string, p event.Params) []string {
		if isLock(strategy) {
			return []string{event.CodeNetOn, "library", event.CodeNetOff}
		}
		ids := []string{event.CodeNetOn, "taken", event.CodeNetOff, "late"}
		if strategy != "validity" {
			ids = append(ids, "stale-write")
		}
		return ids
	},
	lockOf: extendLock, // a library's own lock for its ways, safe for the story's own
}

func runLateGrant(ctx context.Context, env *Env) error {
	if err := initStock(ctx, env); err != nil {
		return err
	}
	asked := newCue()   // given once w00's request has reached the server
	settled := newCue() // given once w00 has written or stopped
	err := env.Workers(ctx, 2, func(ctx context.Context, w *Worker) {
		l, err := env.NewLock(w, extendLock(env.Strategy), env.Params.RetryPolicy(), nil)
		if err != nil {
			w.Fail(ctx, err, "")
			return
		}
		w.Lock = l
		if w.ID == 0 {
			defer settled.give()
			lateHolder(ctx, env, w, asked, settled)
			return
		}
		if asked.wait(ctx) != nil || w.Sleep(ctx, 100*time.Millisecond) != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
		extendWaiter(ctx, env, w, make(chan bool), settled)
	})
	return finalStock(ctx, env, err)
}

// lateHolder is w00: its acquire's answer comes back after the TTL.
func lateHolder(ctx context.Context, env *Env, w *Worker, asked, settled *cue) {
	st := env.Store
	ttl := env.Params.TTL.D()
	late := 3 * ttl / 2
	if wm, ok := w.Lock.(lock.Warmer); ok {
		// A server that has served the library has its scripts: the late
		// answer is then the grant, not a NOSCRIPT.
		if err := wm.Warm(ctx, st.Key("warm")); err != nil {
			asked.give()
			w.Fail(ctx, err, "")
			return
		}
	}
	slow := store.Toxic{Kind: store.ToxicLatency, Dir: store.Down, D: late}
	if _, err := env.run.injectNet(Fault{Kind: FaultNet, Worker: 0, Node: 0, Net: slow, D: late}); err != nil {
		asked.give()
		w.Fail(ctx, err, "")
		return
	}
	sent := w.Now()
	asked.give() // the request itself is not held up: the server sets the key now
	if isLock(env.Strategy) {
		libraryLate(ctx, env, w, settled)
		return
	}
	lease, err := w.Lock.Acquire(ctx, st.Key("lock:stock"), ttl)
	if err != nil {
		w.Fail(ctx, err, "lock not obtained")
		return
	}
	took := w.Now() - sent
	if env.Strategy == "validity" && took >= ttl {
		w.Emit(event.Event{Kind: event.KindLockLost, Res: "lock:stock", Token: lease.Token,
			Msg: fmt.Sprintf("granted, but the answer took %s: past the %s TTL counted from the request, it holds nothing", ms(took), ms(ttl))})
		releaseQuietly(ctx, lease)
		// It stayed out: w01 goes on, and w00 asks again, the price of
		// knowing.
		settled.give()
		if lease, err = w.Lock.Acquire(ctx, st.Key("lock:stock"), ttl); err != nil {
			w.Fail(ctx, err, "lock not obtained")
			return
		}
	}
	lateSale(ctx, env, w, lease)
}

// lateSale is w00's sale under the lease it has.
func lateSale(ctx context.Context, env *Env, w *Worker, lease *lock.Lease) {
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: "stock"})
	v, ok := readStock(ctx, env, w)
	if !ok {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		releaseQuietly(ctx, lease)
		return
	}
	writeAndLeave(ctx, env, w, lease, v-1)
}

// libraryLate is w00 through a library: one try of its own acquire under
// the slow link. A lock it returns, it holds: it enters. A try it gave up
// on, it did not get: it stays out (w01 goes on) and asks again.
func libraryLate(ctx context.Context, env *Env, w *Worker, settled *cue) {
	key, ttl := env.Store.Key("lock:stock"), env.Params.TTL.D()
	lease, err := w.Lock.TryAcquire(ctx, key, ttl)
	if errors.Is(err, lock.ErrNotObtained) {
		settled.give()
		lease, err = w.Lock.Acquire(ctx, key, ttl)
	}
	if err != nil {
		w.Fail(ctx, err, "lock not obtained")
		return
	}
	lateSale(ctx, env, w, lease)
}

func lateGrantBeats(strategy string, p event.Params) []Beat {
	if isLock(strategy) {
		return []Beat{{"library", libraryAnswer(0), func(e event.Event) string {
			if e.Kind == event.KindAcquired {
				return fmt.Sprintf("The grant reaches w00 late; %s returns the lock and w00 enters.", strategy)
			}
			said, _, _ := strings.Cut(e.Msg, " (")
			return said + ". w00 holds nothing: it stays out and asks again."
		}}}
	}
	bs := []Beat{
		{"taken", notBy(event.KindAcquired, 0), said(fmt.Sprintf("w00's lock, set at once, lapsed after %s — before its answer reached w00. w01 takes it.", ms(p.TTL.D())))},
	}
	if strategy == "validity" {
		return append(bs, Beat{"late", by(event.KindLockLost, 0), said("The grant reaches w00 after the TTL: counted from its request, it holds nothing. It stays out and asks again.")})
	}
	return append(bs,
		Beat{"late", by(event.KindAcquired, 0), said("The grant reaches w00 after the TTL; w00 takes it at its word and enters.")},
		Beat{"stale-write", violation("lost_update"), checkerSays("A sale is lost. The checker: ")})
}

// libraryAnswer is w's first acquire answered: granted, denied, or given
// up on by its library.
func libraryAnswer(w int32) func(event.Event) bool {
	return func(e event.Event) bool {
		return e.Worker == w && (e.Kind == event.KindAcquired || e.Kind == event.KindDenied ||
			(e.Kind == event.KindError && e.Code == "acquire"))
	}
}
