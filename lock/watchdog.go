package lock

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/clock"
)

// Watchdog is Safe plus renewal: while the lock is held, a goroutine extends
// its TTL every ttl/3 with a Lua compare-and-PEXPIRE. When a renewal finds
// the lock gone or foreign, or no renewal has succeeded for a whole TTL, the
// lock is lost: the lease's context is cancelled with cause ErrLockLost.
type Watchdog struct {
	Safe
	fenced *Fenced // acquire with a fencing token instead
}

// NewWatchdog returns the watchdog strategy.
func NewWatchdog(c Client, o Options) *Watchdog { return &Watchdog{Safe: Safe{base: newBase(o), c: c}} }

// NewFencedWatchdog returns a watchdog whose acquire also takes a fencing
// token, as Fenced does.
func NewFencedWatchdog(c Client, o Options) *Watchdog {
	w := NewWatchdog(c, o)
	w.fenced = &Fenced{base: w.base, c: c}
	return w
}

// Strategy returns "watchdog" or "fenced-watchdog".
func (w *Watchdog) Strategy() string {
	if w.fenced != nil {
		return "fenced-watchdog"
	}
	return "watchdog"
}

// TryAcquire makes one attempt.
func (w *Watchdog) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return w.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (w *Watchdog) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return w.acquire(ctx, key, ttl, w.try)
}

func (w *Watchdog) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error) {
	try := w.Safe.try
	if w.fenced != nil {
		try = w.fenced.try
	}
	// The TTL runs from when the server set it, no earlier than the
	// attempt was sent: the lock's life is counted from there.
	since := w.clock.Now()
	l, err := try(ctx, key, ttl, attempt)
	if err != nil {
		return nil, err
	}
	l.cancellable(w.clock)
	// The renewals end when the lock is released or abandoned: their
	// context is cancelled then, and the holder waits for them to end.
	rctx, stop := w.clock.WithCancel(l.ctx)
	g := clock.NewGroup(w.clock)
	g.Go(rctx, "renewals of "+key, func(ctx context.Context) { w.renew(ctx, l, since) })
	l.abandon = func() {
		stop()
		g.Wait(ctx)
	}
	cad := l.release
	l.release = func(ctx context.Context) error {
		stop()
		g.Wait(ctx)
		err := cad(ctx)
		if errors.Is(err, ErrNotHeld) && !l.Lost() {
			// The renewals did not notice in time: the holder learns it now.
			w.lost(l, "found lost at release", false)
		}
		return err
	}
	return l, nil
}

// renew extends l every ttl/3 until stop is closed or the lock is lost.
// Renewals are due at fixed points after the last one sent (not after its
// reply came back, which would let a slow reply push every later renewal
// back), and the lock's remaining life is counted from when the last
// successful renewal was sent, the earliest the server can have reset it.
func (w *Watchdog) renew(ctx context.Context, l *Lease, lastOK time.Duration) {
	every := max(l.TTL/3, time.Millisecond)
	due := lastOK + every
	for {
		if w.clock.SleepUntil(ctx, due) != nil {
			return
		}
		if w.hold != nil && w.hold(ctx) != nil {
			return
		}
		sent := w.clock.Now()
		// A renewal may take at most what is left of the lock's life.
		left := l.TTL - (sent - lastOK)
		rctx, rcancel := w.clock.WithTimeout(ctx, max(left, time.Millisecond))
		n, err := renewScript.Run(rctx, w.c, []string{l.Key}, l.Token, w.ms(l.TTL)).Int64()
		rcancel()
		if ctx.Err() != nil {
			return // released (or the run ended) while renewing
		}
		switch {
		case err == nil && n == 1:
			lastOK, due = sent, sent+every
			w.emit(Step{Kind: StepRenewed, Key: l.Key, Token: l.Token, TTL: l.TTL, Node: -1, Call: sent})
			continue
		case err == nil && n == 0:
			w.lost(l, "held by another owner", true)
			return
		case err == nil:
			w.lost(l, "expired", true)
			return
		}
		w.emit(Step{Kind: StepRenewFailed, Key: l.Key, Token: l.Token, Node: -1, Msg: err.Error(), Call: sent, Op: "renew", Outcome: classify(err)})
		now := w.clock.Now()
		left = l.TTL - (now - lastOK)
		if left <= 0 {
			w.lost(l, "no renewal for a whole TTL", true)
			return
		}
		due = now + min(every, left) // try once more, at the latest when the TTL runs out
	}
}

// lost records the loss; renewing says whether a renewal found it (and so
// also failed).
func (w *Watchdog) lost(l *Lease, why string, renewing bool) {
	if renewing {
		w.emit(Step{Kind: StepRenewFailed, Key: l.Key, Token: l.Token, Node: -1, Msg: why})
	}
	w.emit(Step{Kind: StepLockLost, Key: l.Key, Token: l.Token, Node: -1, Msg: why})
	l.cancel(errors.Join(ErrLockLost, errors.New(why)))
}
