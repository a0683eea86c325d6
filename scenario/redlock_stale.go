package scenario

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/clock"
	"github.com/locklab/locklab/lock"
)

// stale is the pause past the validity (part 4) and Kleppmann's fix for
// it (part 5). a takes the lock on all five nodes, reads the record and
// stops the world for one and a half TTLs; b, polling, takes the lock once
// it has lapsed, reads and writes the record; a wakes up a stale holder and
// writes what it read before its pause plus one. Unfenced, that write lands
// over b's: a lost update. Fenced, each node counts a fence with its vote,
// the lock's fence is the granting majority's highest, and the record
// rejects a's fence, older than b's.
func (r *redlockRun) stale(ctx context.Context, part int, a, b *Worker) {
	env := r.env
	res := redlockRes[part]
	fenced := part == 4
	if fenced {
		r.heading(part, fmt.Sprintf("%s pauses past its validity again, but with fences: each node counts one with its vote, the lock takes the majority's highest, and the record rejects a fence older than the last it saw (Kleppmann's fix)", check.WorkerName(a.ID)))
	} else {
		r.heading(part, fmt.Sprintf("%s takes the lock on all five nodes, reads the record, then pauses past its validity", check.WorkerName(a.ID)))
	}
	st := env.Store
	if err := st.Client().Set(ctx, st.Key(res), 0, 0).Err(); err != nil {
		env.Emit(event.Event{Kind: event.KindBeat, Msg: "the record could not be set up: " + serverMessage(err)})
		return
	}
	locker := func(w *Worker, retry lock.Retry) lock.Locker {
		if fenced {
			return r.fencedLock(w, retry)
		}
		return r.lock(w, r.full, retry)
	}
	// b says when it has written (or has given up): a's pause outlasts
	// the validity, and lasts until then however slow the machine is.
	written := make(chan bool, 1)
	// b sets out a quarter TTL after a holds the lock: a's votes may be
	// slow on a busy machine, and a polls until it has it.
	held := make(chan struct{})
	g := clock.NewGroup(env.Clock())
	g.Go(ctx, check.WorkerName(a.ID), func(context.Context) {
		ctx := a.ctx
		l, err := locker(a, r.poll).Acquire(ctx, st.Key("lock:"+res), r.ttl)
		close(held)
		if err != nil {
			a.Fail(ctx, err, "lock not obtained")
			return
		}
		a.Emit(event.Event{Kind: event.KindWorkStart, Res: res})
		v, err := r.read(a, res)
		landed := false
		if err == nil {
			if err = a.PauseUntil(ctx, r.ttl+r.ttl/2, written, "stop-the-world pause past the validity"); err == nil {
				landed, err = r.write(a, res, l.Fence, v+1)
			}
		}
		a.Emit(event.Event{Kind: event.KindWorkEnd, Res: res})
		releaseQuietly(ctx, l)
		switch {
		case err != nil:
			a.Fail(ctx, err, "")
		case landed:
			a.Done(true, "", "woke up a stale holder: its validity had ended, yet it wrote as if it held the lock")
		default:
			a.Done(false, check.FailLock, fmt.Sprintf("woke up a stale holder: its write with fence %d was rejected", l.Fence))
		}
	})
	_, _ = await(ctx, held)
	env.Clock().Sleep(ctx, r.ttl/4)
	r.newHolder(b, locker(b, r.poll), res, written)
	g.Wait(ctx)
}

// newHolder is b's turn in a stale part: it takes the lock a's pause let
// lapse, writes the record, and says on written whether its write landed.
func (r *redlockRun) newHolder(b *Worker, lk lock.Locker, res string, written chan<- bool) {
	ctx := b.ctx
	l, err := lk.Acquire(ctx, r.env.Store.Key("lock:"+res), r.ttl)
	if err != nil {
		written <- false
		b.Fail(ctx, err, "lock not obtained")
		return
	}
	b.Emit(event.Event{Kind: event.KindWorkStart, Res: res})
	v, err := r.read(b, res)
	landed := false
	if err == nil {
		landed, err = r.write(b, res, l.Fence, v+1)
	}
	written <- landed
	if err == nil {
		err = b.Sleep(ctx, r.work)
	}
	b.Emit(event.Event{Kind: event.KindWorkEnd, Res: res})
	releaseQuietly(ctx, l)
	switch {
	case err != nil:
		b.Fail(ctx, err, "")
	case landed:
		b.Done(true, "", "")
	default:
		b.Done(false, check.FailLock, fmt.Sprintf("its write with fence %d was rejected", l.Fence))
	}
}

// read gets the record res.
func (r *redlockRun) read(w *Worker, res string) (int64, error) {
	st, ctx := r.env.Store, w.ctx
	call := w.Now()
	v, err := st.Client().Get(ctx, st.Key(res)).Int64()
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("read", event.Event{Res: res}, call, err)
		}
		return 0, err
	}
	w.Emit(event.Event{Kind: event.KindRead, Res: res}.WithStock(v).WithCall(call))
	return v, nil
}

// write sets the record res to v; with a fence (not 0) only if the record
// has seen no newer fence. false, nil: the fence was rejected.
func (r *redlockRun) write(w *Worker, res string, fence, v int64) (bool, error) {
	st, ctx := r.env.Store, w.ctx
	call := w.Now()
	ev := event.Event{Res: res}.WithStock(v)
	if fence != 0 {
		ev = ev.WithFence(fence)
	}
	var err error
	written := int64(1)
	if fence == 0 {
		err = st.Client().Set(ctx, st.Key(res), v, 0).Err()
	} else {
		written, err = fencedWriteScript.Run(ctx, st.Client(), []string{st.Key(res), st.Key(res + ":fence")}, fence, v).Int64()
	}
	if err != nil {
		if ctx.Err() == nil {
			w.OpError("write", ev, call, err)
		}
		return false, err
	}
	switch {
	case fence == 0:
	case written == 0:
		w.Emit(event.Event{Kind: event.KindFenceRejected, Res: res}.WithFence(fence).WithCall(call))
	default:
		w.Emit(event.Event{Kind: event.KindFenceOK, Res: res}.WithFence(fence).WithCall(call))
	}
	ev.Kind = event.KindWrite
	w.Emit(ev.WithOK(written != 0).WithCall(call))
	return written != 0, nil
}
