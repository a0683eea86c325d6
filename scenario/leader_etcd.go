package scenario

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/lock"

	"github.com/locklab/locklab/store"
)

// leaderElection campaigns as w in the run's etcd election until elected,
// on a lease of --ttl. While it campaigns the client keeps the lease
// alive; once elected, w keeps it alive itself, at once and every third
// of the TTL,
// and each keep-alive is in the log (renewed), so a view draws the lease
// etcd kept. It returns the leader's revision (its fence), a function that
// stops the keep-alives as the holder's pause would, and one that resigns.
func leaderElection(ctx context.Context, env *Env, w *Worker) (rev int64, orphan func(), resign func(), err error) {
	v, err := env.Store.Server(store.ServerEtcd)
	if err != nil {
		return 0, nil, nil, err
	}
	c, ok, err := lock.NewCandidate(lock.ServerEtcd, v)
	if !ok && err == nil {
		err = fmt.Errorf("scenario: this program has no etcd election")
	}
	if err != nil {
		return 0, nil, nil, err
	}
	ttl := env.Params.TTL.D()
	fail := func(call time.Duration, err error) (int64, func(), func(), error) {
		if ctx.Err() == nil {
			w.OpError("campaign", event.Event{Res: leaderLock}, call, err)
		}
		return 0, nil, nil, err
	}
	w.Emit(event.Event{Kind: event.KindAttempt, Res: leaderLock, TTL: ttl, Has: event.HasTTL, Msg: "campaigns in the etcd election"})
	call := w.Now()
	granted, err := c.Grant(ctx, int64(max(math.Ceil(env.Clock().Real(ttl).Seconds()), 1)))
	if err != nil {
		return fail(call, err)
	}
	if rev, err = c.Campaign(ctx, check.WorkerName(w.ID)); err != nil {
		return fail(call, err)
	}
	tok := c.Token()
	// The lease etcd granted, in its whole seconds (its leader may round a
	// short TTL up to its minimum), as the run counts time.
	w.Emit(event.Event{Kind: event.KindAcquired, Res: leaderLock, Token: tok, TTL: leaseTTL(env, granted), Has: event.HasTTL,
		Msg: "elected"}.WithFence(rev).WithCall(call))
	ka := &keepAlive{env: env, w: w, c: c, tok: tok, rev: rev, lastOK: call}
	stop := ka.start(ctx)
	resign = func() {
		stop()
		// Generous: an answer that comes late is still an answer, and a
		// resignation left unanswered makes the run's end unknown.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resignWithin)
		defer cancel()
		_ = c.Resign(rctx)
		// Revoking the lease deletes the leader's key: the release. A
		// lease already gone had lapsed.
		call := w.Now()
		err := c.Revoke(rctx)
		rel := event.Event{Kind: event.KindRelease, Res: leaderLock, Token: tok}.WithFence(rev).WithCall(call)
		switch {
		case err == nil:
			w.Emit(rel.WithOK(true))
		case errors.Is(err, lock.ErrLeaseGone):
			rel.Kind, rel.Msg = event.KindReleaseFailed, "expired"
			w.Emit(rel.WithOK(false))
		default:
			// Unanswered: the lease lapses at its TTL if the revoke did not
			// land. The term is over either way.
			rel.Kind, rel.Msg, rel.Code, rel.Outcome = event.KindReleaseFailed, oneLine(err), "release", event.OutcomeIndeterminate
			w.Emit(rel.WithOK(false))
		}
	}
	return rev, stop, resign, nil
}

// resignWithin bounds a leader's resignation and the revoke of its lease.
const resignWithin = 10 * time.Second

// leaseTTL is a lease of secs whole seconds of etcd's time, in the run's.
func leaseTTL(env *Env, secs int64) time.Duration {
	d := time.Duration(secs) * time.Second
	if s := env.Clock().Speed(); s > 0 {
		return time.Duration(float64(d) * s)
	}
	return d
}

// keepAlive keeps a leader's lease alive from its election on, every
// third of the TTL, until stopped (the holder's pause, its resignation), logging each keep-alive;
// when etcd no longer knows the lease, the lock is lost.
type keepAlive struct {
	env    *Env
	w      *Worker
	c      lock.Candidate
	tok    string
	rev    int64
	lastOK time.Duration
}

// start runs the keep-alives; the function it returns stops them and
// waits until they have.
func (k *keepAlive) start(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.run(ctx)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

func (k *keepAlive) run(ctx context.Context) {
	ttl := k.env.Params.TTL.D()
	every := max(ttl/3, time.Millisecond)
	ev := event.Event{Res: leaderLock, Token: k.tok}.WithFence(k.rev)
	// The first at once: the campaign's session kept the lease alive at its
	// own pace (its last keep-alive may be most of a TTL old), and a leader
	// that waited a third of a TTL more could find its lease gone before
	// it ever kept it alive.
	for first := true; ; first = false {
		if !first && k.env.Clock().Sleep(ctx, every) != nil {
			return
		}
		sent := k.w.Now()
		rctx, cancel := context.WithTimeout(ctx, max(k.env.Clock().Real(ttl), time.Second))
		ttl2, err := k.c.KeepAliveOnce(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		e := ev.WithCall(sent)
		switch {
		case err == nil && ttl2 > 0:
			k.lastOK = sent
			e.Kind, e.TTL, e.Has = event.KindRenewed, leaseTTL(k.env, ttl2), e.Has|event.HasTTL
			k.w.Emit(e)
			continue
		case err == nil || errors.Is(err, lock.ErrLeaseGone):
			e.Kind, e.Msg = event.KindRenewFailed, "lease expired"
			k.w.Emit(e)
			k.w.Emit(event.Event{Kind: event.KindLockLost, Res: leaderLock, Token: k.tok, Msg: "lease expired"}.WithFence(k.rev))
			return
		}
		e.Kind, e.Msg, e.Code, e.Outcome = event.KindRenewFailed, oneLine(err), "renew", event.OutcomeIndeterminate
		k.w.Emit(e)
		if k.w.Now()-k.lastOK >= ttl {
			k.w.Emit(event.Event{Kind: event.KindLockLost, Res: leaderLock, Token: k.tok, Msg: "no keep-alive for a whole TTL"}.WithFence(k.rev))
			return
		}
	}
}

func oneLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
