package scenario

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
)

// buyCell is a purchase under a strategy that keeps the stock itself: a
// row locked FOR UPDATE and read and written in its transaction, or a
// value read and written back only if nobody wrote it since (optimistic:
// no lock, no critical section; a refused write is retried per --retry).
func buyCell(ctx context.Context, env *Env, w *Worker, info lock.Info) {
	key := env.Store.Key("stock")
	var backoff *lock.Backoff
	if info.Optimistic {
		backoff = env.Params.RetryPolicy().Backoff(w.Rand)
	}
	for attempt := 1; ; attempt++ {
		ok, retry := buyCellOnce(ctx, env, w, key, info, attempt)
		if ok || !retry {
			return
		}
		d, more := backoff.Next()
		if !more {
			w.Done(false, check.FailLock, "write refused: the stock changed since it was read")
			return
		}
		w.Emit(event.Event{Kind: event.KindBackoff, Res: "stock", Delay: d.Truncate(time.Microsecond), Attempt: int32(attempt), Has: event.HasDelay | event.HasAttempt})
		if err := env.Clock().Sleep(ctx, d); err != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
	}
}

// buyCellOnce is one try; retry reports an optimistic write refused, with
// no outcome recorded yet.
func buyCellOnce(ctx context.Context, env *Env, w *Worker, key string, info lock.Info, attempt int) (ok, retry bool) {
	fail := func(err error) {
		if ctx.Err() != nil {
			w.Done(false, check.FailCancel, "interrupted")
			return
		}
		w.Done(false, check.FailError, err.Error())
	}
	lease, err := w.Lock.Acquire(ctx, key, env.Params.TTL.D())
	if err != nil {
		if errors.Is(err, lock.ErrNotObtained) && ctx.Err() == nil {
			w.Done(false, check.FailLock, "lock not obtained")
		} else {
			fail(err)
		}
		return false, false
	}
	exclusive := !info.Optimistic
	leave := func() {
		if exclusive {
			w.Emit(event.Event{Kind: event.KindWorkEnd, Res: "stock"})
		}
		releaseQuietly(ctx, lease)
	}
	if exclusive {
		w.Emit(event.Event{Kind: event.KindWorkStart, Res: "stock"})
	}
	// Without a lock nothing orders the workers' operations but the server:
	// each optimistic read and write is recorded in the order it happened.
	serial := func() func() {
		if exclusive {
			return func() {}
		}
		env.serial.Lock(ctx)
		return env.serial.Unlock
	}
	done := serial()
	v, err := lease.Cell.Load(ctx)
	if err == nil {
		w.Emit(event.Event{Kind: event.KindRead, Res: "stock"}.WithStock(v))
	}
	done()
	if err != nil {
		leave()
		fail(err)
		return false, false
	}
	if v < 1 {
		leave()
		w.Done(false, check.FailStock, "out of stock")
		return false, false
	}
	if err := env.Clock().Sleep(lease.Context(), env.Params.Delay.D()); err != nil {
		leave()
		fail(context.Cause(lease.Context()))
		return false, false
	}
	done = serial()
	stored, err := lease.Cell.Store(ctx, v-1)
	if err == nil {
		w.Emit(event.Event{Kind: event.KindWrite, Res: "stock", Msg: refusedMsg(stored)}.WithStock(v - 1).WithOK(stored))
	}
	done()
	if err != nil {
		leave()
		fail(err)
		return false, false
	}
	leave()
	if !stored {
		return false, true
	}
	w.Done(true, "", "")
	return true, false
}

func refusedMsg(stored bool) string {
	if stored {
		return ""
	}
	return "refused: changed since read"
}

// finalCellStock reads the stock back from where the strategy kept it.
func finalCellStock(ctx context.Context, env *Env, cells lock.Cells, err error) error {
	if cells == nil {
		return finalStock(ctx, env, err)
	}
	rctx, cancel := bounded(context.WithoutCancel(ctx), env, 2*time.Second)
	defer cancel()
	if v, gerr := cells.Get(rctx, env.Store.Key("stock")); gerr == nil {
		env.Emit(event.Event{Kind: event.KindRead, Res: "stock"}.WithStock(v))
	} else if err == nil {
		err = gerr
	}
	return err
}
