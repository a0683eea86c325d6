// Package libs registers the Redis lock libraries people use as strategies,
// unmodified: bsm/redislock ("redislock"), go-redsync ("redsync" on one
// node, "redsync-quorum" on five) and rueidis's lock ("rueidislock", which
// renews its own lock and talks through a rueidis client of its own). Each attempt is one call of the
// library's own acquire (the scenario's retry policy spaces them), each
// release its own release; what it sent is seen at the Redis protocol by a
// client hook and told in the step's message. The libraries read the wall
// clock (deadlines, validity) and make their own random tokens where they
// do, so their runs keep real time (see lock.WallClock).
package libs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/store"
)

// Versions are the libraries' pinned versions (go.mod), for the docs.
const Versions = "github.com/bsm/redislock v0.9.4, github.com/go-redsync/redsync/v4 v4.18.1, github.com/redis/rueidis v1.0.79"

// Register adds the libraries' strategies to lock's registry; lock/all
// calls it once.
func Register() {
	single := trait.Traits{Server: lock.ServerRedis, Expiry: trait.ExpiryTTL, Token: trait.TokenRandom,
		Renewal: trait.RenewalNone, Nodes: trait.Nodes{Min: 1, Default: 1}, Excludes: true, WallClock: true}
	lock.Register(lock.Info{Name: "redislock", Doc: "github.com/bsm/redislock v0.9.4, unmodified: Obtain (SET NX PX in Lua), Release (compare-and-delete)", Traits: single},
		func(s lock.Servers, o lock.Options) (lock.Locker, error) {
			c, err := clientOf(s, 0)
			if err != nil {
				return nil, err
			}
			return &redisLock{kit: lock.NewKit(o), c: redislock.New(c), readTimeout: readTimeoutOf(c)}, nil
		})
	lock.Register(lock.Info{Name: "redsync", Doc: "github.com/go-redsync/redsync/v4 v4.18.1 on one node, unmodified: Mutex.Lock (SET NX PX), Unlock (compare-and-delete)", Traits: single},
		func(s lock.Servers, o lock.Options) (lock.Locker, error) { return newRedsync(s, o, "redsync", 1) })
	quorum := single
	quorum.Nodes = trait.Nodes{Min: 3, Default: 5}
	lock.Register(lock.Info{Name: "redsync-quorum", Doc: "github.com/go-redsync/redsync/v4 v4.18.1 on every node, unmodified: Redlock's majority with drift and validity", Traits: quorum},
		func(s lock.Servers, o lock.Options) (lock.Locker, error) {
			return newRedsync(s, o, "redsync-quorum", len(s.Redis))
		})
	renews := single
	renews.Renewal, renews.RenewEvery = trait.RenewalLibrary, 2 // its ExtendInterval: half the validity
	renews.WallDeadlines = true
	lock.Register(lock.Info{Name: rueidisName, Doc: "github.com/redis/rueidis v1.0.79 rueidislock, unmodified: SET NX PXAT its wall clock + validity, extended every half validity; a lost extension cancels the holder's context", Traits: renews},
		newRueidis)
}

// clientOf is node i's *redis.Client, with the protocol hook on it.
func clientOf(s lock.Servers, i int) (*redis.Client, error) {
	if i >= len(s.Redis) {
		return nil, fmt.Errorf("lock/libs: no Redis node %d", i)
	}
	c, ok := s.Redis[i].(*redis.Client)
	if !ok {
		return nil, fmt.Errorf("lock/libs: the libraries need a *redis.Client, got %T", s.Redis[i])
	}
	if _, had := hooked.LoadOrStore(c, true); !had {
		c.AddHook(wireHook{})
	}
	return c, nil
}

// hooked are the clients the protocol hook is on.
var hooked sync.Map

// wire is what one library call sent and what came back, command by
// command, as the protocol hook saw it.
type wire struct {
	mu   sync.Mutex
	said []string
	// nodes, when set, tells each node's answer as a step of its own
	// (redsync's Mutex on several nodes).
	nodes *nodeSteps
}

type wireKey struct{}

// add records cmd and its answer: err is what the command returned (a
// process hook sees it before go-redis sets it on the command).
func (w *wire) add(cmd redis.Cmder, err error) {
	name := strings.ToUpper(cmd.Name())
	reply := "OK"
	switch {
	case errors.Is(err, redis.Nil):
		reply = "nil"
	case err != nil:
		reply = "error"
	default:
		switch c := cmd.(type) {
		case *redis.Cmd:
			reply = fmt.Sprint(c.Val())
		case *redis.IntCmd:
			reply = fmt.Sprint(c.Val())
		case *redis.BoolCmd:
			reply = fmt.Sprint(c.Val())
		}
	}
	w.note(name, reply)
}

// note records one command and its reply.
func (w *wire) note(name, reply string) {
	if len(reply) > 40 {
		reply = reply[:40] + "…"
	}
	w.mu.Lock()
	if len(w.said) < 16 {
		w.said = append(w.said, name+"→"+reply)
	}
	w.mu.Unlock()
}

// String is "sent EVALSHA→1, …".
func (w *wire) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.said) == 0 {
		return "sent nothing"
	}
	return "sent " + strings.Join(w.said, ", ")
}

// watch returns a context whose commands the hook records in a fresh wire.
func watch(ctx context.Context) (context.Context, *wire) {
	w := &wire{}
	return context.WithValue(ctx, wireKey{}, w), w
}

// wireHook records a library call's commands on the wire in its context.
type wireHook struct{}

func (wireHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (wireHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		w, _ := ctx.Value(wireKey{}).(*wire)
		node, perNode := ctx.Value(nodeKey{}).(int)
		var call time.Duration
		var start time.Time
		if perNode = perNode && w != nil && w.nodes != nil; perNode {
			call, start = w.nodes.kit.Now(), time.Now()
		}
		err := next(ctx, cmd)
		if w != nil {
			w.add(cmd, err)
		}
		if perNode {
			w.nodes.sent(node, cmd, err, call, time.Since(start))
		}
		return err
	}
}

func (wireHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if w, ok := ctx.Value(wireKey{}).(*wire); ok {
			for _, c := range cmds {
				if store.Netted(ctx) && c.Name() == "pexpire" {
					continue // the run's safety net, not the library
				}
				w.add(c, c.Err())
			}
		}
		return err
	}
}

// redisLock is bsm/redislock.
type redisLock struct {
	kit         *lock.Kit
	c           *redislock.Client
	readTimeout time.Duration // the client's own; 0: none
}

func (*redisLock) Strategy() string { return "redislock" }

func (r *redisLock) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return r.try(ctx, key, ttl, 1)
}

func (r *redisLock) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return r.kit.Acquire(ctx, key, ttl, r.try)
}

func (r *redisLock) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	// A paused worker stops at its command's gate (clock.WithGate), not
	// here: Options.Hold is for renewals, and may hold for good.
	r.kit.Emit(lock.Step{Kind: lock.StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	wctx, w := watch(ctx)
	call, start := r.kit.Now(), time.Now()
	l, err := r.c.Obtain(wctx, key, r.kit.ToServer(ttl), &redislock.Options{RetryStrategy: redislock.NoRetry()})
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		r.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held; " + w.String(), Call: call})
		return nil, lock.ErrNotObtained
	case ownDeadline(ctx, err, time.Since(start), r.readTimeout):
		// Obtain bounds a call without a deadline by the TTL, on the
		// wall clock from the call: an answer later than that is not
		// waited for, whether or not Redis set the key.
		return nil, acquireGaveUp(r.kit, key, attempt, call, fmt.Sprintf(
			"redislock gave up at its Obtain deadline (the TTL from its call, %s); whether Redis set the key is not known (%v); %s",
			wallWords(r.kit, r.kit.ToServer(ttl)), err, w.String()))
	case err != nil:
		return nil, err
	}
	r.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: l.Token(), TTL: ttl, Attempt: attempt, Node: -1, Msg: w.String(), Call: call})
	return lock.NewLease(ctx, key, l.Token(), ttl, attempt, lock.LeaseFuncs{Release: func(ctx context.Context) error {
		wctx, w := watch(ctx)
		call := r.kit.Now()
		err := l.Release(wctx)
		return r.released(key, l.Token(), call, w, err, errors.Is(err, redislock.ErrLockNotHeld))
	}, Extend: func(ctx context.Context) error {
		// Refresh: compare-and-PEXPIRE by the TTL; nil, or ErrNotObtained
		// when the key is not its token (expired, or another's).
		wctx, w := watch(ctx)
		call := r.kit.Now()
		err := l.Refresh(wctx, r.kit.ToServer(ttl), nil)
		said := "nil"
		if err != nil {
			said = fmt.Sprintf("%q", err.Error())
		}
		return extendedStep(r.kit, key, l.Token(), ttl, call, "Refresh returned "+said, w, err, errors.Is(err, redislock.ErrNotObtained))
	}}), nil
}

// Warm takes and gives back the library's lock on key, unseen: its
// scripts are then loaded on the server, as on one that has served it.
func (r *redisLock) Warm(ctx context.Context, key string) error {
	l, err := r.c.Obtain(ctx, key, time.Second, &redislock.Options{RetryStrategy: redislock.NoRetry()})
	if err != nil {
		return err
	}
	return l.Release(ctx)
}

// ownDeadline reports whether a library's call that waited waited and
// ended with err ended at a deadline of the library's own: its context's,
// or the read deadline go-redis set on the connection from it (an i/o
// timeout sooner than the client's own read timeout, readTimeout, 0 for
// none). ctx is the caller's: done, the run ended the call.
func ownDeadline(ctx context.Context, err error, waited, readTimeout time.Duration) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout() && (readTimeout == 0 || waited < readTimeout)
}

// readTimeoutOf is c's read timeout (go-redis: 0 is 3 s, below 0 none),
// 0 for none.
func readTimeoutOf(c *redis.Client) time.Duration {
	switch rt := c.Options().ReadTimeout; {
	case rt == 0:
		return 3 * time.Second
	case rt < 0:
		return 0
	default:
		return rt
	}
}

// wallWords says a span of the wall clock a library counts, and what it
// is of the run's time when the run goes at another speed.
func wallWords(k *lock.Kit, wall time.Duration) string {
	if run := k.Virtual(wall); run != wall {
		return fmt.Sprintf("%s on its wall clock, %s of the run's time", wall, run.Round(time.Microsecond))
	}
	return wall.String() + " on its wall clock"
}

// acquireGaveUp records an acquire the library stopped waiting for on a
// deadline of its own, and returns ErrNotObtained: no lock, and the
// scenario's retry policy spaces the next try, as after a denial.
func acquireGaveUp(k *lock.Kit, key string, attempt int, call time.Duration, msg string) error {
	k.Emit(lock.Step{Kind: lock.StepError, Op: "acquire", Outcome: lock.GaveUp, Key: key, Attempt: attempt, Node: -1, Call: call, Msg: msg})
	return lock.ErrNotObtained
}

// extendedStep records a library's own extend: what it returned (in
// words) and what it sent; notHeld says the library found the lock gone
// or another's.
func extendedStep(k *lock.Kit, key, tok string, ttl, call time.Duration, returned string, w *wire, err error, notHeld bool) error {
	switch {
	case notHeld:
		k.Emit(lock.Step{Kind: lock.StepRenewFailed, Key: key, Token: tok, Node: -1, Call: call,
			Msg: returned + ": not extended (expired or another's); " + w.String()})
		return fmt.Errorf("%w: %w", lock.ErrNotHeld, err)
	case err != nil:
		k.Emit(lock.Step{Kind: lock.StepRenewFailed, Key: key, Token: tok, Node: -1, Call: call, Msg: returned + "; " + w.String()})
		return err
	}
	k.Emit(lock.Step{Kind: lock.StepRenewed, Key: key, Token: tok, TTL: ttl, Node: -1, Call: call, Msg: returned + "; " + w.String()})
	return nil
}

// released records a library's release: notHeld says the library found
// the lock gone or another's (it does not say which).
func (r *redisLock) released(key, tok string, call time.Duration, w *wire, err error, notHeld bool) error {
	return releasedStep(r.kit, key, tok, call, w, err, notHeld)
}

func releasedStep(k *lock.Kit, key, tok string, call time.Duration, w *wire, err error, notHeld bool) error {
	switch {
	case notHeld:
		k.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: "not held (expired or another owner's); " + w.String(), Call: call})
		return lock.ErrNotHeld
	case err != nil:
		k.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: err.Error(), Call: call})
		return err
	}
	k.Emit(lock.Step{Kind: lock.StepRelease, Key: key, Token: tok, Node: -1, OK: true, Msg: w.String(), Call: call})
	return nil
}
