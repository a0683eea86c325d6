package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

var crash = &Scenario{
	Name:  "crash",
	Speed: 0.2, // 2 s of virtual time: 10 s
	Title: "Crash recovery: the TTL is the price of a dead holder",
	Watch: "the TTL counting down on the lock lane while everyone is denied, then the first acquire",
	Explain: "w00 takes the lock and dies without releasing it. Everyone else is denied until the TTL " +
		"(--ttl 2s) lapses; then one of them acquires and the work goes on. TTL-based locks recover from " +
		"crashes, and the time they stand blocked is the availability they cost.",
	Source:     "the PHP + Redis locking lab, §4",
	Strategies: []string{"safe", "naive", "fenced", "watchdog", "redislock", "redsync", "rueidislock"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Stock, p.TTL = 3, 5, event.Millis(2*time.Second)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(10*time.Millisecond), 1000
	}),
	Uses:  []string{"workers", "stock", "ttl", "retry", "max-retries", "retry-base"},
	run:   runCrash,
	beats: crashBeats,
	notes: crashNotes,
}

func runCrash(ctx context.Context, env *Env) error {
	st := env.Store
	if err := initStock(ctx, env); err != nil {
		return err
	}
	// The others come once w00 holds the lock, however late a busy machine
	// starts it: the story is about a crashed holder.
	holding := newCue()
	err := env.Workers(ctx, env.Params.Workers, func(ctx context.Context, w *Worker) {
		if w.ID == 0 {
			defer holding.give()
			lease, err := w.Lock.Acquire(ctx, st.Key("lock:stock"), env.Params.TTL.D())
			if err != nil {
				w.Fail(ctx, err, "lock not obtained")
				return
			}
			w.Emit(event.Event{Kind: event.KindWorkStart, Res: "stock"})
			lease.Abandon() // the process is gone: nothing renews or releases it
			w.Crash("crashed holding the lock; it is never released")
			return
		}
		if holding.wait(ctx) != nil || w.Sleep(ctx, 50*time.Millisecond) != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
		buy(ctx, env, w)
	})
	return finalStock(ctx, env, err)
}

// crashNotes measures the blocked time: from the crash to the next acquire.
func crashNotes(h event.Header) check.NoteFold {
	return &crashFold{ttl: h.Params.TTL.D(), crashed: -1, next: -1}
}

type crashFold struct{ ttl, crashed, next time.Duration }

func (f *crashFold) Add(e *event.Event) {
	switch {
	case e.Kind == event.KindCrash && f.crashed < 0:
		f.crashed = e.T
	case e.Kind == event.KindAcquired && f.crashed >= 0 && f.next < 0:
		f.next = e.T
	}
}

func (f *crashFold) Notes() [][2]string {
	if f.crashed < 0 {
		return nil
	}
	if f.next < 0 {
		return [][2]string{{"Blocked", "until the end: nobody acquired after the crash"}}
	}
	return [][2]string{{"Blocked", fmt.Sprintf("%.0f ms after the crash (TTL %v)", float64((f.next-f.crashed).Microseconds())/1000, f.ttl)}}
}
