package libs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	redsyncgo "github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/locklab/locklab/lock"
)

// redsyncLock is go-redsync's Mutex over n of the run's nodes.
type redsyncLock struct {
	kit         *lock.Kit
	name        string
	rs          *redsync.Redsync
	n           int
	readTimeout time.Duration // node 0's client's own; 0: none
}

func newRedsync(s lock.Servers, o lock.Options, name string, n int) (lock.Locker, error) {
	var pools []redsyncredis.Pool
	var rt time.Duration
	for i := range n {
		c, err := clientOf(s, i)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			rt = readTimeoutOf(c)
		}
		pools = append(pools, nodePool{Pool: redsyncgo.NewPool(c), node: i})
	}
	if len(pools) == 0 {
		return nil, fmt.Errorf("lock/libs: %s has no Redis node", name)
	}
	return &redsyncLock{kit: lock.NewKit(o), name: name, rs: redsync.New(pools...), n: len(pools), readTimeout: rt}, nil
}

func (r *redsyncLock) Strategy() string { return r.name }

// Warm takes and gives back the library's Mutex on key, unseen: its
// scripts are then loaded on every node, as on ones that have served it.
func (r *redsyncLock) Warm(ctx context.Context, key string) error {
	m := r.rs.NewMutex(key, redsync.WithExpiry(time.Second), redsync.WithTries(1))
	if err := m.LockContext(ctx); err != nil {
		return err
	}
	_, err := m.UnlockContext(ctx)
	return err
}

func (r *redsyncLock) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return r.try(ctx, key, ttl, 1)
}

func (r *redsyncLock) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return r.kit.Acquire(ctx, key, ttl, r.try)
}

func (r *redsyncLock) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	// A paused worker stops at its command's gate (clock.WithGate), not
	// here: Options.Hold is for renewals, and may hold for good.
	r.kit.Emit(lock.Step{Kind: lock.StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	// One try: the scenario's retry policy spaces the attempts.
	m := r.rs.NewMutex(key, redsync.WithExpiry(r.kit.ToServer(ttl)), redsync.WithTries(1))
	wctx, w := watch(ctx)
	if r.n > 1 {
		w.nodes = &nodeSteps{kit: r.kit, outer: ctx, key: key, ttl: ttl, attempt: attempt, acquiring: true, readTimeout: r.readTimeout}
	}
	call, start := r.kit.Now(), time.Now()
	err := m.LockContext(wctx)
	if r.n > 1 {
		return r.quorum(ctx, m, w.nodes, err, key, ttl, attempt, call, start)
	}
	var taken *redsync.ErrTaken
	switch {
	case errors.As(err, &taken), errors.Is(err, redsync.ErrFailed):
		r.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held; " + w.String(), Call: call})
		return nil, lock.ErrNotObtained
	case ownDeadline(ctx, err, time.Since(start), r.readTimeout):
		// Mutex.Lock waits for each node a share of the expiry (its
		// timeout factor, 5%), on the wall clock: a node that answers
		// later counts as not granted, whether or not it set the key, and
		// the library then sends its delete to every node.
		return nil, acquireGaveUp(r.kit, key, attempt, call, fmt.Sprintf(
			"redsync gave up per node after 5%% of the expiry (%s); whether Redis set the key is not known, and it sent its delete (%v); %s",
			wallWords(r.kit, r.kit.ToServer(ttl)/20), err, w.String()))
	case err != nil:
		return nil, err
	}
	r.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: m.Value(), TTL: ttl, Attempt: attempt, Node: -1, Msg: w.String(), Call: call})
	return r.lease(ctx, m, key, ttl, attempt), nil
}

// lease is the held Mutex: its release is the Mutex's Unlock, its extend
// the Mutex's Extend.
func (r *redsyncLock) lease(ctx context.Context, m *redsync.Mutex, key string, ttl time.Duration, attempt int) *lock.Lease {
	return lock.NewLease(ctx, key, m.Value(), ttl, attempt, lock.LeaseFuncs{Release: func(ctx context.Context) error {
		wctx, w := watch(ctx)
		if r.n > 1 {
			w.nodes = &nodeSteps{kit: r.kit, outer: ctx, key: key, ttl: ttl, readTimeout: r.readTimeout}
		}
		call := r.kit.Now()
		ok, err := m.UnlockContext(wctx)
		var taken *redsync.ErrTaken
		notHeld := !ok && (err == nil || errors.Is(err, redsync.ErrLockAlreadyExpired) || errors.As(err, &taken))
		switch {
		case r.n == 1:
			if notHeld {
				err = nil
			}
			return releasedStep(r.kit, key, m.Value(), call, w, err, notHeld)
		case ok: // each node's answer was its own step
			return nil
		case err != nil:
			return errors.Join(lock.ErrNotHeld, errors.New(oneLine(err.Error())))
		}
		return lock.ErrNotHeld
	}, Extend: func(ctx context.Context) error { return r.extend(ctx, m, key, ttl) }})
}

// quorum is the outcome of one Mutex.Lock on several nodes, whose votes
// and undoes were told node by node as they came: acquired when the
// library says so, with the validity it computed on its wall clock; else
// not obtained, in words — unless every node failed with a server's own
// error (none said taken, none granted, none left unanswered), which is an
// error as in locklab's Redlock.
func (r *redsyncLock) quorum(ctx context.Context, m *redsync.Mutex, ns *nodeSteps, err error, key string, ttl time.Duration, attempt int, call time.Duration, start time.Time) (*lock.Lease, error) {
	granted, taken, unsure, seen := ns.votes()
	if err == nil {
		validity := r.kit.Virtual(m.Until().Sub(start))
		r.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: m.Value(), TTL: validity, Attempt: attempt, Node: -1, Call: call,
			Msg: fmt.Sprintf("%d/%d nodes; valid until %s on redsync's wall clock", granted, r.n, m.Until().Format("15:04:05.000"))})
		l := r.lease(ctx, m, key, ttl, attempt)
		l.Validity = validity
		return l, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	said := oneLine(err.Error())
	if granted == 0 && taken == 0 && unsure == 0 && seen > 0 {
		r.kit.Emit(lock.Step{Kind: lock.StepError, Op: "acquire", Outcome: lock.Failed, Key: key, Attempt: attempt, Node: -1, Call: call,
			Msg: "every node failed: " + said})
		return nil, fmt.Errorf("redsync: every node failed: %s", said)
	}
	no := notObtained{votes: fmt.Sprintf("lock: not obtained: %d of %d nodes granted (quorum %d)", granted, r.n, r.n/2+1), said: said}
	if granted > r.n/2 {
		no.votes += ", but its validity ran out"
	}
	r.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Call: call, Msg: no.Error()})
	return nil, no
}

// extend is the Mutex's own Extend: compare-and-PEXPIRE by its expiry on
// each node; false and ErrTaken when a quorum's key is not its token
// (gone or another's: it does not tell which), false and ErrExtendFailed
// when the extension took longer than its validity.
func (r *redsyncLock) extend(ctx context.Context, m *redsync.Mutex, key string, ttl time.Duration) error {
	wctx, w := watch(ctx)
	call := r.kit.Now()
	ok, err := m.ExtendContext(wctx)
	said := fmt.Sprintf("Extend returned %v", ok)
	if err != nil {
		said += fmt.Sprintf(", %q", err.Error())
	}
	var taken *redsync.ErrTaken
	notHeld := !ok && errors.As(err, &taken)
	if !ok && err == nil {
		err = redsync.ErrExtendFailed
	}
	return extendedStep(r.kit, key, m.Value(), ttl, call, said, w, err, notHeld)
}
