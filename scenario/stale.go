package scenario

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/themes"
	"github.com/redis/go-redis/v9"
)

// The stale-holder family: a holder outlives its lock, by working too long
// (ttl-expiry), by a stop-the-world pause (fencing), or by a pause its
// watchdog cannot renew through (renewal). What happens next is whatever
// Redis and the resource do: nothing here is narrated.

var ttlExpiry = &Scenario{
	Name:  "ttl-expiry",
	Speed: 0.2, // 3 s: 15 s
	Title: "TTL expiry: the lock lapses while its holder works",
	Watch: "the " + glyph(themes.SymLapse) + " on the lock lane while w00 still works, w01 walking in, and w00's stale write",
	Explain: "w00 takes the lock with a TTL shorter than its work (--ttl 1s, --work 3s). The TTL lapses while " +
		"it is still inside; w01, polling, takes the lock and sells; then w00 wakes up and writes the stock it read " +
		"3 seconds ago — a lost update, and two workers were inside at once. With fenced the resource rejects " +
		"w00's stale fence; with watchdog w00 renews and w01 never gets in.",
	Source:     "the PHP + Redis locking lab, §4 (its own run hid the overlap; here it happens)",
	Strategies: []string{"safe", "fenced", "watchdog", "fenced-watchdog", "naive", "redislock", "redsync", "rueidislock"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Stock, p.TTL, p.Work = 2, 2, event.Millis(time.Second), event.Millis(3*time.Second)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(100*time.Millisecond), 60
	}),
	Uses:  []string{"workers", "stock", "ttl", "work", "retry", "max-retries", "retry-base"},
	run:   func(ctx context.Context, env *Env) error { return runStale(ctx, env, staleWork) },
	beats: staleBeats(staleWork),
}

var fencing = &Scenario{
	Name:  "fencing",
	Speed: 0.2, // 2 s: 10 s
	Title: "Fencing tokens: a stale writer rejected",
	Watch: "the fence numbers on the lock lane, and the resource refusing w00's older fence",
	Explain: "w00 takes the lock (fence 1), reads, then stalls in a stop-the-world pause longer than its TTL. " +
		"w01 takes the lock (fence 2) and writes. w00 wakes and writes with fence 1: the protected resource has " +
		"seen fence 2 and rejects it. With safe there is no fence to compare — a random token cannot order " +
		"writes — and the stale write lands.",
	Source:     "Kleppmann, \"How to do distributed locking\"; the locking-patterns article",
	Strategies: []string{"fenced", "safe", "fenced-watchdog", "watchdog", "rueidislock"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Stock, p.TTL, p.Work = 2, 2, event.Millis(time.Second), event.Millis(2*time.Second)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(100*time.Millisecond), 60
	}),
	Uses:  []string{"workers", "stock", "ttl", "work", "retry", "max-retries", "retry-base"},
	run:   func(ctx context.Context, env *Env) error { return runStale(ctx, env, stalePause) },
	beats: staleBeats(stalePause),
}

var renewal = &Scenario{
	Name:  "renewal",
	Speed: 0.5, // 4 s: 8 s
	Title: "Lock renewal: a watchdog keeps long work safe — until the holder stops",
	Watch: "the " + glyph(themes.SymRenewal) + " renewal ticks, then the pause: no ticks, the lock lapses, w01 gets in, w00 learns lock_lost too late",
	Explain: "w00 holds a short lock (--ttl 1s) through long work; its watchdog renews every ttl/3. Then w00 " +
		"stops the world for longer than the TTL — and its watchdog stops with it. The lock lapses, w01 takes " +
		"it, and w00 resumes to write the stock it read before the pause: the write lands before the watchdog " +
		"learns the lock is lost. With fenced-watchdog the resource rejects that write. With rueidislock the " +
		"library renews, not a watchdog: it extends its own key every half TTL, on a timer that runs on " +
		"through the pause, but its extension cannot leave the stopped process in time.",
	Source:     "the locking-patterns article (lock renewal); Kleppmann on process pauses",
	Strategies: []string{"watchdog", "fenced-watchdog", "rueidislock"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Stock, p.TTL, p.Work = 2, 2, event.Millis(time.Second), event.Millis(2*time.Second)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(100*time.Millisecond), 80
	}),
	Uses:  []string{"workers", "stock", "ttl", "work", "retry", "max-retries", "retry-base"},
	run:   func(ctx context.Context, env *Env) error { return runStale(ctx, env, staleRenewal) },
	beats: staleBeats(staleRenewal),
}

// withDefaults returns the base defaults changed by f.
func withDefaults(f func(*event.Params)) event.Params {
	p := baseDefaults
	f(&p)
	return p
}

type staleMode int

const (
	staleWork    staleMode = iota // w00 works --work, longer than its TTL
	stalePause                    // w00 pauses for --work right after reading
	staleRenewal                  // w00 works --work renewing, then pauses 2×TTL
)

func runStale(ctx context.Context, env *Env, mode staleMode) error {
	if err := initStock(ctx, env); err != nil {
		return err
	}
	// w00 holds the lock before the others arrive, however a busy machine
	// schedules their goroutines.
	holding := newCue()
	// w00's stall outlasts its planned time until another worker has been
	// through (its write landed, or it gave up): the stale write comes
	// after, however slow the machine.
	another := make(chan bool)
	var once sync.Once
	through := func() { once.Do(func() { close(another) }) }
	err := env.Workers(ctx, env.Params.Workers, func(ctx context.Context, w *Worker) {
		if w.ID == 0 {
			staleHolder(ctx, env, w, mode, holding, another)
			return
		}
		defer through()
		// The others arrive a little later, one after the other.
		if holding.wait(ctx) != nil || w.Sleep(ctx, time.Duration(w.ID)*100*time.Millisecond) != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
		buy(ctx, env, w)
	})
	return finalStock(ctx, env, err)
}

// staleHolder is w00: it takes the lock, reads, and is late to write.
// Its stall lasts at least its planned time, and, once its lock has
// lapsed, until another has been through.
func staleHolder(ctx context.Context, env *Env, w *Worker, mode staleMode, holding *cue, another <-chan bool) {
	st := env.Store
	defer holding.give()
	lease, err := w.Lock.Acquire(ctx, st.Key("lock:stock"), env.Params.TTL.D())
	got := env.Clock().Now()
	holding.give()
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
	work := env.Params.Work.D()
	switch mode {
	case staleWork:
		// Work, holding the lease's context: a watchdog that loses the lock
		// stops the work. A lock nothing renews has lapsed by got+TTL.
		err = w.Sleep(lease.Context(), work)
		if err == nil && !lockInfo(env.Strategy).Renews() && env.Clock().Now() >= got+env.Params.TTL.D() {
			_, _, err = recv(ctx, another)
		}
	case stalePause:
		err = w.PauseUntil(ctx, work, another, "stop-the-world pause")
	case staleRenewal:
		if err = w.Sleep(lease.Context(), work); err == nil {
			// The last check before writing passes; then the world stops.
			err = w.PauseUntil(ctx, 2*env.Params.TTL.D(), another, "stop-the-world pause longer than the TTL")
		}
	}
	if err != nil {
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		release()
		if errors.Is(context.Cause(lease.Context()), lock.ErrLockLost) {
			w.Done(false, check.FailLock, "lock lost: stopped before writing")
		} else {
			w.Done(false, check.FailCancel, "interrupted")
		}
		return
	}
	writeAndLeave(ctx, env, w, lease, v-1)
}

// initStock sets the stock counter to --stock and says so.
func initStock(ctx context.Context, env *Env) error {
	st := env.Store
	if err := st.Client().Set(ctx, st.Key("stock"), env.Params.Stock, 0).Err(); err != nil {
		return err
	}
	env.Emit(event.Event{Kind: event.KindInit, Res: "stock"}.WithStock(env.Params.Stock))
	return nil
}

// finalStock records the counter's real value after every worker is done.
func finalStock(ctx context.Context, env *Env, err error) error {
	wait := 2 * time.Second
	if ctx.Err() != nil {
		wait = 300 * time.Millisecond // interrupted: a frozen server must not hold the exit
	}
	rctx, cancel := bounded(context.WithoutCancel(ctx), env, wait)
	defer cancel()
	if v, gerr := env.Store.Client().Get(rctx, env.Store.Key("stock")).Int64(); gerr == nil {
		env.Emit(event.Event{Kind: event.KindRead, Res: "stock"}.WithStock(v))
	} else if err == nil {
		err = gerr
		if errors.Is(gerr, redis.Nil) {
			err = errors.New("the stock key is gone from the server: it lost its data during the run (a restart without persistence?)")
		}
	}
	return err
}

// renewedWords say what renews a held lock, as its traits tell it.
func renewedWords(strategy string, t trait.Traits, ttl time.Duration) string {
	switch t.Renewal {
	case trait.RenewalLibrary:
		every := "on a timer of its own"
		if t.RenewEvery > 0 {
			every = fmt.Sprintf("every %s (TTL/%d), on a timer of its own", ms(ttl/time.Duration(t.RenewEvery)), t.RenewEvery)
		}
		return fmt.Sprintf("%s extends w00's key itself, %s", strategy, every)
	case trait.RenewalKeepAlive:
		return "w00 keeps its lease alive"
	}
	return "w00's watchdog renews the lock every TTL/3"
}

// pauseWords say what a stop-the-world pause does to what renews the lock.
func pauseWords(strategy string, t trait.Traits) string {
	if t.Renewal == trait.RenewalLibrary {
		return "w00 stops the world. " + strategy + "'s own timer runs on, but nothing leaves a stopped process: " +
			"its extension waits for w00 to resume."
	}
	return "w00 stops the world. Its watchdog, if it has one, stops with it."
}
