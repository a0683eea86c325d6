package scenario

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
)

var webhook = &Scenario{
	Name:     "webhook",
	Speed:    0.001,                                                                                                // 5 ms: 5 s
	speedFor: func(strategy string, _ event.Params) float64 { return map[string]float64{"safe": 0.002}[strategy] }, // 20 ms: retries
	Title:    "Webhook delivered twice: one payment, credited how often?",
	Watch:    "how many times the account is credited for one payment",
	Explain: "The same payment webhook arrives --workers times at once. Without a lock each delivery checks " +
		"\"already processed?\", finds no, and credits — the account is credited more than once. With a lock " +
		"and the check inside it, exactly once. An idempotency key (SET processed NX) needs no lock at all. " +
		"fail-fast answers a delivery that finds the lock taken with \"409 locked, retry after N ms\", N the " +
		"lock's remaining PTTL.",
	Source:     "the locking-patterns article (payment webhook); the Valkey lock example (fail fast)",
	Strategies: []string{"none", "safe", "idempotency", "fail-fast"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Delay, p.TTL = 3, event.Millis(5*time.Millisecond), event.Millis(2*time.Second)
		p.Retry, p.RetryBase, p.MaxRetries = "fixed", event.Millis(10*time.Millisecond), 100
	}),
	Uses: []string{"workers", "delay", "ttl", "retry-base", "max-retries"},
	// none and idempotency take no lock; fail-fast answers 409 at once.
	noRetry: []string{"none", "idempotency", "fail-fast"},
	run:     runWebhook,
	beats:   webhookBeats,
	// fail-fast is a safe lock that does not wait; an idempotency key is
	// no lock.
	lockOf: func(s string) string {
		switch s {
		case "safe", "fail-fast":
			return "safe"
		case "none":
			return "none"
		}
		return ""
	},
}

func runWebhook(ctx context.Context, env *Env) error {
	env.Emit(event.Event{Kind: event.KindInit, Res: "credit", Code: check.LimitOnce})
	// The deliveries arrive at once: under fail-fast the first one holds
	// the lock until every delivery has made its attempt, so the others
	// find it taken however a busy machine schedules them; without a lock
	// none calls the bank until every delivery has checked.
	d := payment(env.Params.Workers)
	return env.Workers(ctx, env.Params.Workers, func(ctx context.Context, w *Worker) {
		deliver(ctx, env, w, d)
	})
}

// delivery is one webhook delivery's names: its id (the payment), the
// resource its credit is (an effect allowed once) and its "processed"
// marker's.
type delivery struct {
	id, credit, processed string
	all                   *arrivals // the deliveries that arrive together; nil for one from outside
}

// payment is the webhook's delivery of payment 42, n times at once.
func payment(n int) delivery {
	return delivery{id: "pay_42", credit: "credit", processed: "processed", all: newArrivals(n)}
}

// arrivals counts the deliveries of one run that have made their first
// attempt at the lock (without a lock: their check).
type arrivals struct {
	left atomic.Int32
	done chan struct{}
}

func newArrivals(n int) *arrivals {
	a := &arrivals{done: make(chan struct{})}
	a.left.Store(int32(n))
	return a
}

// arrive counts one delivery in; a nil arrivals counts nothing.
func (a *arrivals) arrive() {
	if a != nil && a.left.Add(-1) == 0 {
		close(a.done)
	}
}

// wait blocks until every delivery has arrived, or ctx ends.
func (a *arrivals) wait(ctx context.Context) {
	if a == nil {
		return
	}
	_, _ = await(ctx, a.done)
}

// deliveryOf names the resources of delivery id as an outside request
// sees them.
func deliveryOf(id string) delivery {
	return delivery{id: id, credit: "credit:" + id, processed: "processed:" + id}
}

// deliver is one delivery of webhook d handled by w under the run's strategy.
func deliver(ctx context.Context, env *Env, w *Worker, d delivery) {
	h := handling{ctx: ctx, env: env, w: w, d: d,
		processed: env.Store.Key("processed:" + d.id), account: env.Store.Key("account:7")}
	switch env.Strategy {
	case "none":
		h.checkAndCredit()
	case "idempotency":
		h.idempotent()
	case "safe", "fail-fast":
		h.locked()
	}
}

// handling is one delivery being handled: its worker, its keys.
type handling struct {
	ctx                context.Context
	env                *Env
	w                  *Worker
	d                  delivery
	processed, account string
}

// credit calls the bank (the delay), credits the account and records the
// delivery as processed.
func (h handling) credit() error {
	ctx, w, st := h.ctx, h.w, h.env.Store
	if err := w.Sleep(ctx, h.env.Params.Delay.D()); err != nil { // calling the bank
		return err
	}
	call := w.Now()
	bal, err := st.Client().IncrBy(ctx, h.account, 100).Result()
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("write", event.Event{Res: h.d.credit}, call, err)
		}
		return err
	}
	w.Emit(event.Event{Kind: event.KindWrite, Res: h.d.credit, Msg: fmt.Sprintf("account balance %d", bal)}.WithOK(true).WithCall(call))
	call = w.Now()
	if err := st.Client().Set(ctx, h.processed, "1", 0).Err(); err != nil {
		if ctx.Err() == nil {
			w.OpError("write", event.Event{Res: h.d.processed}, call, err)
		}
		return err
	}
	return nil
}

// checkAndCredit reads the processed record and credits the account if it
// is not there: the check-then-act a lock must cover.
func (h handling) checkAndCredit() {
	ctx, w, d := h.ctx, h.w, h.d
	w.Emit(event.Event{Kind: event.KindWorkStart, Res: d.id})
	call := w.Now()
	n, err := h.env.Store.Client().Exists(ctx, h.processed).Result()
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("read", event.Event{Res: d.processed}, call, err)
		}
	} else {
		w.Emit(event.Event{Kind: event.KindRead, Res: d.processed, Msg: fmt.Sprintf("processed=%v", n == 1)}.WithCall(call))
	}
	if h.env.Strategy == "none" {
		// Without a lock the deliveries that arrived at once have all
		// checked before any calls the bank: each finds no record
		// however a busy machine schedules them.
		d.all.arrive()
		if err == nil && n == 0 {
			d.all.wait(ctx)
		}
	}
	switch {
	case err != nil:
	case n == 1:
		w.Emit(event.Event{Kind: event.KindWorkEnd, Res: d.id})
		w.Done(true, "", "200 already processed")
		return
	default:
		err = h.credit()
	}
	w.Emit(event.Event{Kind: event.KindWorkEnd, Res: d.id})
	if err != nil {
		w.Fail(ctx, err, "")
		return
	}
	w.Done(true, "", "200 credited")
}

// idempotent credits only the delivery that set the idempotency key first.
func (h handling) idempotent() {
	ctx, w, st := h.ctx, h.w, h.env.Store
	idem := "idem:" + h.d.id
	call := w.Now()
	first, err := st.Client().SetNX(ctx, st.Key(idem), w.ID, 0).Result()
	switch {
	case err != nil:
		if ctx.Err() == nil {
			w.OpError("write", event.Event{Res: idem}, call, err)
		}
		w.Fail(ctx, err, "")
	case !first:
		w.Emit(event.Event{Kind: event.KindRead, Res: idem, Msg: "key taken: a duplicate"}.WithCall(call))
		w.Done(true, "", "200 duplicate, ignored")
	default:
		if err := h.credit(); err != nil {
			w.Fail(ctx, err, "")
		} else {
			w.Done(true, "", "200 credited")
		}
	}
}

// locked checks and credits under the delivery's lock: safe waits for it
// with the run's retries, fail-fast answers 409 at once.
func (h handling) locked() {
	ctx, env, w, d := h.ctx, h.env, h.w, h.d
	retry := env.Params.RetryPolicy()
	if env.Strategy == "fail-fast" {
		retry = lock.Retry{}
	}
	l, err := env.NewLock(w, "safe", retry, nil)
	if err != nil {
		d.all.arrive()
		w.Done(false, check.FailError, err.Error())
		return
	}
	key := env.Store.Key("lock:" + d.id)
	lease, err := l.Acquire(ctx, key, env.Params.TTL.D())
	d.all.arrive()
	if err == nil && env.Strategy == "fail-fast" {
		d.all.wait(ctx)
	}
	if err != nil && !errors.Is(err, lock.ErrNotObtained) {
		w.Fail(ctx, err, "")
		return
	}
	if err != nil {
		after := env.remaining(ctx, key)
		w.Emit(event.Event{Kind: event.KindDone, Code: check.FailLock, Delay: after, Has: event.HasDelay | event.HasOK,
			Msg: fmt.Sprintf("409 locked, retry after %d ms", after.Milliseconds())})
		return
	}
	h.checkAndCredit()
	releaseQuietly(ctx, lease)
}

// remaining is how long the key has left to live, in virtual time: 0 if
// it has no TTL, is gone, or the server cannot say.
func (e *Env) remaining(ctx context.Context, key string) time.Duration {
	pttl, err := e.Store.Client().PTTL(ctx, key).Result()
	if err != nil || pttl < 0 {
		pttl = 0
	}
	return e.Clock().FromServer(pttl)
}
