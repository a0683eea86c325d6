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
	"github.com/locklab/locklab/themes"
)

var naiveFlaws = &Scenario{
	Name:     "naive-flaws",
	Speed:    0.2,                                                                                                // 2 s: 10 s
	speedFor: func(strategy string, _ event.Params) float64 { return map[string]float64{"safe": 0.1}[strategy] }, // 1.1 s
	Title:    "Why SETNX + EXPIRE is unsafe",
	Watch:    "lock A with no TTL after the crash; on lock B, w02's late DEL (" + glyph(themes.SymForeign) + ") freeing w03's lock and w04 walking in",
	Explain: "Two beats at once, on two locks. A: w00 crashes between SETNX and EXPIRE — the lock has no TTL " +
		"and w01 waits for it forever (until the run gives up). B: w02's lock lapses while it dawdles after its " +
		"work; w03 takes the lock; then w02 releases with an unconditional DEL — deleting w03's lock — and w04 " +
		"walks in while w03 is still inside. With safe the crash cannot leave a lock without a TTL, and w02's " +
		"release is refused: not its lock.",
	Source:     "the PHP + Redis locking lab, §2 (described there; here it happens)",
	Strategies: []string{"naive", "safe"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.TTL, p.Work = 5, event.Millis(500*time.Millisecond), event.Millis(300*time.Millisecond)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(50*time.Millisecond), 40
	}),
	Uses:  []string{"ttl", "work", "retry-base"},
	Cast:  5,
	run:   runNaiveFlaws,
	beats: naiveBeats,
}

func runNaiveFlaws(ctx context.Context, env *Env) error {
	env.Emit(event.Event{Kind: event.KindInit, Res: "A"})
	env.Emit(event.Event{Kind: event.KindInit, Res: "B"})
	ttl, work := env.Params.TTL.D(), env.Params.Work.D()
	base := env.Params.RetryBase.D()
	// poll retries every base for as long as wait.
	poll := func(wait time.Duration) lock.Retry {
		return lock.Retry{Policy: lock.RetryFixed, Base: base, MaxRetries: min(max(int(wait/base), 1), lock.MaxRetries)}
	}
	// The story is a chain of cues, not of planned times, so that a busy
	// machine cannot reorder it: w01 waits for A once w00 has taken it; w03
	// goes for B once w02 holds it, w02 lingers until w03 is inside, w04
	// tries once w02 has released, and w03 works until w04 has tried.
	w00Took, w02In, w03In, w02Out, w04Tried := newCue(), newCue(), newCue(), newCue(), newCue()
	return env.Workers(ctx, 5, func(ctx context.Context, w *Worker) {
		var err error
		switch w.ID {
		case 0: // crashes right after SETNX
			w.Lock, err = env.NewLock(w, env.Strategy, lock.Retry{}, func(string) bool { return true })
			if err == nil {
				crashGap(ctx, env, w, ttl, w00Took)
			}
		case 1: // waits for lock A
			w.Lock, err = env.NewLock(w, env.Strategy, poll(4*ttl), nil)
			if err == nil && w00Took.wait(ctx) == nil && w.Sleep(ctx, 50*time.Millisecond) == nil {
				holdFor(ctx, env, w, "A", ttl, 4*ttl, work, 0, cues{})
			}
		case 2: // holds B, finishes its work, releases late
			holdFor(ctx, env, w, "B", ttl, 0, work, ttl+ttl/2-work, cues{inside: w02In, lingerUntil: w03In, released: w02Out})
		case 3: // takes B once it lapsed, and works well within its TTL
			// (a long one: however late w04 comes, w03's lock is still its own)
			w.Lock, err = env.NewLock(w, env.Strategy, poll(4*ttl), nil)
			if err == nil && w02In.wait(ctx) == nil && w.Sleep(ctx, ttl/5) == nil {
				holdFor(ctx, env, w, "B", 4*ttl, 4*ttl, ttl*4/5, 0, cues{inside: w03In, workUntil: w04Tried})
			}
		case 4: // arrives while w03 works, right after w02's release
			w.Lock, err = env.NewLock(w, env.Strategy, poll(4*ttl), nil)
			if err == nil && w.Sleep(ctx, ttl+ttl/4) == nil && w02Out.wait(ctx) == nil {
				holdFor(ctx, env, w, "B", ttl, 4*ttl, work/2, 0, cues{tried: w04Tried})
			}
		}
		// Whatever happened, nobody waits on a worker that is gone.
		for _, c := range map[int32][]*cue{0: {w00Took}, 2: {w02In, w02Out}, 3: {w03In}, 4: {w04Tried}}[w.ID] {
			c.give()
		}
		if err != nil {
			w.Done(false, check.FailError, err.Error())
		}
	})
}

// cue is a one-time signal between the workers of a choreography.
type cue struct {
	once sync.Once
	ch   chan struct{}
}

func newCue() *cue { return &cue{ch: make(chan struct{})} }

// give signals c; again is harmless. A nil cue is ignored.
func (c *cue) give() {
	if c != nil {
		c.once.Do(func() { close(c.ch) })
	}
}

// wait blocks until c is given or ctx ends. A nil cue is given already.
func (c *cue) wait(ctx context.Context) error {
	if c == nil {
		return nil
	}
	_, err := await(ctx, c.ch)
	return err
}

// cues are what a holder waits for and signals besides its planned times.
type cues struct {
	inside      *cue // given once the holder is in the critical section
	tried       *cue // given after its first attempt, obtained or not
	released    *cue // given once it has released
	workUntil   *cue // it works at least work, and until this is given
	lingerUntil *cue // it lingers at least late, and until this is given
}

// crashGap is w00: it takes lock A and dies before it can set a TTL (naive)
// or just after SET NX PX (safe); then the run reads the key's real TTL.
func crashGap(ctx context.Context, env *Env, w *Worker, ttl time.Duration, took *cue) {
	key := env.Store.Key("lock:A")
	_, err := w.Lock.TryAcquire(ctx, key, ttl)
	took.give()
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
		env.Emit(event.Event{Kind: event.KindBeat, Res: "lock:A", Msg: "lock:A has no TTL (PTTL -1): it will never expire"})
	default:
		env.Emit(event.Event{Kind: event.KindBeat, Res: "lock:A", Msg: fmt.Sprintf("lock:A expires in %v: the crash costs one TTL", env.Clock().FromServer(pttl))})
	}
}

// holdFor acquires lock name with a TTL of ttl (polling up to wait), works inside for work,
// lingers for late outside the critical section, then releases; cues add
// what it waits for and tells the others.
func holdFor(ctx context.Context, env *Env, w *Worker, name string, ttl, wait, work, late time.Duration, cs cues) {
	defer cs.inside.give()
	defer cs.tried.give()
	defer cs.released.give()
	key := env.Store.Key("lock:" + name)
	var lease *lock.Lease
	var err error
	if wait > 0 && cs.tried == nil {
		lease, err = w.Lock.Acquire(ctx, key, ttl)
	} else {
		lease, err = w.Lock.TryAcquire(ctx, key, ttl)
		if errors.Is(err, lock.ErrNotObtained) && wait > 0 {
			cs.tried.give()
			lease, err = w.Lock.Acquire(ctx, key, ttl)
		}
	}
	if err != nil {
		w.Fail(ctx, err, "gave up: lock "+name+" never came free")
		return
	}
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: name})
	cs.inside.give()
	cs.tried.give()
	err = w.Sleep(ctx, work)
	if err == nil {
		err = cs.workUntil.wait(ctx)
	}
	w.Emit(event.Event{Kind: event.KindWorkEnd, Res: name})
	if err == nil && late > 0 {
		err = w.Sleep(ctx, late)
	}
	if err == nil {
		err = cs.lingerUntil.wait(ctx)
	}
	releaseQuietly(ctx, lease)
	cs.released.give()
	if err != nil {
		w.Done(false, check.FailCancel, "interrupted")
		return
	}
	w.Done(true, "", "")
}
