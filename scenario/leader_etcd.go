package scenario

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/locklab/locklab/store"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// leaderElection campaigns as w in the run's etcd election until elected,
// on a lease of --ttl that the client keeps alive. It returns the leader's
// revision (its fence), a function that stops the keep-alives as the
// holder's pause would, and one that resigns.
func leaderElection(ctx context.Context, env *Env, w *Worker) (rev int64, orphan func(), resign func(), err error) {
	v, err := env.Store.Server(store.ServerEtcd)
	if err != nil {
		return 0, nil, nil, err
	}
	e, ok := v.(*store.Etcd)
	if !ok {
		return 0, nil, nil, fmt.Errorf("scenario: want a *store.Etcd, got %T", v)
	}
	ttl := env.Params.TTL.D()
	fail := func(call time.Duration, err error) (int64, func(), func(), error) {
		if ctx.Err() == nil {
			w.OpError("campaign", Event{Res: leaderLock}, call, err)
		}
		return 0, nil, nil, err
	}
	w.Emit(Event{Kind: KindAttempt, Res: leaderLock, TTL: ttl, Has: HasTTL, Msg: "campaigns in the etcd election"})
	call := w.Now()
	g, err := e.Client.Grant(ctx, int64(max(math.Ceil(env.Clock().Real(ttl).Seconds()), 1)))
	if err != nil {
		return fail(call, err)
	}
	e.Granted(g.ID)
	s, err := concurrency.NewSession(e.Client, concurrency.WithLease(g.ID), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return fail(call, err)
	}
	el := concurrency.NewElection(s, e.Prefix+"election/leader")
	if err := el.Campaign(ctx, WorkerName(w.ID)); err != nil {
		s.Orphan()
		return fail(call, err)
	}
	rev = el.Rev()
	w.Emit(Event{Kind: KindAcquired, Res: leaderLock, Token: strconv.FormatInt(int64(g.ID), 16), TTL: ttl, Has: HasTTL,
		Msg: "elected"}.WithFence(rev).WithCall(call))
	resign = func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		s.Orphan()
		_ = el.Resign(rctx)
		// Revoked, or lapsed already: either way etcd has forgotten it.
		_, _ = e.Client.Revoke(rctx, g.ID)
		e.Revoked(g.ID)
	}
	return rev, s.Orphan, resign, nil
}
