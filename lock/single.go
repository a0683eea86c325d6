package lock

import (
	"cmp"
	"context"
	_ "embed"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is the smallest Redis client the single-node strategies need;
// *redis.Client, *redis.ClusterClient and *redis.Ring satisfy it.
type Client interface {
	redis.Scripter
	SetNX(ctx context.Context, key string, value any, expiration time.Duration) *redis.BoolCmd
	PExpire(ctx context.Context, key string, expiration time.Duration) *redis.BoolCmd
	Del(ctx context.Context, keys ...string) *redis.IntCmd
	Process(ctx context.Context, cmd redis.Cmder) error
}

var (
	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = redis.NewScript(releaseLua)

	//go:embed scripts/renew.lua
	renewLua    string
	renewScript = redis.NewScript(renewLua)

	//go:embed scripts/fenced_acquire.lua
	fencedLua    string
	fencedScript = redis.NewScript(fencedLua)

	//go:embed scripts/fence_raise.lua
	raiseLua    string
	raiseScript = redis.NewScript(raiseLua)
)

// Compile-time checks.
var (
	_ Locker = (*None)(nil)
	_ Locker = (*Naive)(nil)
	_ Locker = (*Safe)(nil)
	_ Locker = (*Fenced)(nil)
	_ Locker = (*Watchdog)(nil)
	_ Locker = (*Redlock)(nil)
)

// None takes no lock at all: every acquire succeeds at once. The baseline.
type None struct{ base }

// NewNone returns the no-lock baseline.
func NewNone(o Options) *None { return &None{newBase(o)} }

// Strategy returns "none".
func (*None) Strategy() string { return "none" }

// TryAcquire always succeeds and takes nothing.
func (n *None) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return newLease(ctx, key, "", ttl, 1), nil
}

// Acquire always succeeds and takes nothing.
func (n *None) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return n.TryAcquire(ctx, key, ttl)
}

// Naive is SETNX followed by a separate EXPIRE, released by an unconditional
// DEL: a crash between the two commands leaves a lock that never expires,
// and any holder can delete anyone's lock.
type Naive struct {
	base
	c     Client
	crash func(key string) bool
}

// NewNaive returns the naive strategy. crash, if set, is asked after each
// successful SETNX whether to "crash" before EXPIRE (ErrCrashed).
func NewNaive(c Client, o Options, crash func(key string) bool) *Naive {
	return &Naive{base: newBase(o), c: c, crash: crash}
}

// Strategy returns "naive".
func (*Naive) Strategy() string { return "naive" }

// TryAcquire makes one attempt.
func (n *Naive) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return n.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (n *Naive) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return n.acquire(ctx, key, ttl, n.try)
}

func (n *Naive) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error) {
	tok, err := n.token()
	if err != nil {
		return nil, err
	}
	call := n.clock.Now()
	n.emit(Step{Kind: StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	ok, err := n.c.SetNX(ctx, key, tok, 0).Result()
	if err != nil {
		return nil, n.fail("acquire", key, attempt, -1, call, err)
	}
	if !ok {
		n.emit(Step{Kind: StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held", Call: call})
		return nil, ErrNotObtained
	}
	if n.crash != nil && n.crash(key) {
		return nil, ErrCrashed
	}
	if err := n.c.PExpire(ctx, key, time.Duration(n.ms(ttl))*time.Millisecond).Err(); err != nil {
		return nil, n.fail("acquire", key, attempt, -1, call, err)
	}
	n.emit(Step{Kind: StepAcquired, Key: key, Token: tok, TTL: ttl, Attempt: attempt, Node: -1, Call: call})
	l := newLease(ctx, key, tok, ttl, attempt)
	l.release = func(ctx context.Context) error {
		call := n.clock.Now()
		deleted, err := n.c.Del(ctx, key).Result()
		switch {
		case err != nil:
			return n.fail("release", key, 0, -1, call, err)
		case deleted == 0:
			n.emit(Step{Kind: StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: "expired", Call: call})
			return ErrNotHeld
		}
		// DEL does not ask whose lock it deletes: it may well be another's.
		n.emit(Step{Kind: StepRelease, Key: key, Token: tok, Node: -1, OK: true, Call: call})
		return nil
	}
	return l, nil
}

// Safe is SET key token NX PX ttl, released by a Lua compare-and-delete.
type Safe struct {
	base
	c Client
}

// NewSafe returns the safe single-node strategy.
func NewSafe(c Client, o Options) *Safe { return &Safe{base: newBase(o), c: c} }

// Strategy returns "safe".
func (*Safe) Strategy() string { return "safe" }

// TryAcquire makes one attempt.
func (s *Safe) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return s.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (s *Safe) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return s.acquire(ctx, key, ttl, s.try)
}

func (s *Safe) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error) {
	tok, err := s.token()
	if err != nil {
		return nil, err
	}
	call := s.clock.Now()
	s.emit(Step{Kind: StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	cmd := redis.NewBoolCmd(ctx, "set", key, tok, "px", s.ms(ttl), "nx")
	if err := s.c.Process(ctx, cmd); err != nil && err != redis.Nil {
		return nil, s.fail("acquire", key, attempt, -1, call, err)
	}
	if !cmd.Val() {
		s.emit(Step{Kind: StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held", Call: call})
		return nil, ErrNotObtained
	}
	s.emit(Step{Kind: StepAcquired, Key: key, Token: tok, TTL: ttl, Attempt: attempt, Node: -1, Call: call})
	l := newLease(ctx, key, tok, ttl, attempt)
	l.release = func(ctx context.Context) error { return compareAndDelete(ctx, &s.base, s.c, key, tok, -1, "") }
	return l, nil
}

// compareAndDelete releases key if it still holds tok, and says what
// happened. op is OpUndo when it undoes a partial Redlock acquire (the
// steps say so), else "".
func compareAndDelete(ctx context.Context, b *base, c redis.Scripter, key, tok string, node int, op string) error {
	call := b.clock.Now()
	n, err := releaseScript.Run(ctx, c, []string{key}, tok).Int64()
	switch {
	case err != nil && node >= 0:
		// One Redlock node out of several: the quorum decides, not this error.
		b.emit(Step{Kind: StepReleaseFailed, Key: key, Token: tok, Node: node, Msg: err.Error(), Call: call,
			Op: cmp.Or(op, "release"), Outcome: classify(err)})
		return opError("release", key, err)
	case err != nil:
		return b.fail("release", key, 0, node, call, err)
	case n == 1:
		b.emit(Step{Kind: StepRelease, Key: key, Token: tok, Node: node, OK: true, Call: call, Op: op})
		return nil
	case n == 0:
		b.emit(Step{Kind: StepReleaseFailed, Key: key, Token: tok, Node: node, Msg: "held by another owner", Call: call, Op: op})
	default:
		b.emit(Step{Kind: StepReleaseFailed, Key: key, Token: tok, Node: node, Msg: "expired", Call: call, Op: op})
	}
	return ErrNotHeld
}

// Fenced is Safe plus a fencing token: a counter incremented, in the same Lua
// script, only when the lock is obtained. The protected resource rejects any
// write whose fence is not above the last it saw.
type Fenced struct {
	base
	c Client
}

// NewFenced returns the fenced strategy. The fence counter of key lives at
// key+":fence".
func NewFenced(c Client, o Options) *Fenced { return &Fenced{base: newBase(o), c: c} }

// Strategy returns "fenced".
func (*Fenced) Strategy() string { return "fenced" }

// TryAcquire makes one attempt.
func (f *Fenced) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return f.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (f *Fenced) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return f.acquire(ctx, key, ttl, f.try)
}

// FenceKey is where the fence counter of a lock key lives.
func FenceKey(key string) string { return key + ":fence" }

func (f *Fenced) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error) {
	tok, err := f.token()
	if err != nil {
		return nil, err
	}
	call := f.clock.Now()
	f.emit(Step{Kind: StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	fence, err := fencedScript.Run(ctx, f.c, []string{key, FenceKey(key)}, tok, f.ms(ttl)).Int64()
	if err != nil {
		return nil, f.fail("acquire", key, attempt, -1, call, err)
	}
	if fence == 0 {
		f.emit(Step{Kind: StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held", Call: call})
		return nil, ErrNotObtained
	}
	f.emit(Step{Kind: StepAcquired, Key: key, Token: tok, Fence: fence, TTL: ttl, Attempt: attempt, Node: -1, Call: call})
	l := newLease(ctx, key, tok, ttl, attempt)
	l.Fence = fence
	l.release = func(ctx context.Context) error { return compareAndDelete(ctx, &f.base, f.c, key, tok, -1, "") }
	return l, nil
}

// CompareAndDelete deletes key if it holds token: 1 deleted, 0 held by
// another owner, −1 gone. For callers that hold locks taken by their own
// scripts.
func CompareAndDelete(ctx context.Context, c redis.Scripter, key, token string) (int64, error) {
	return releaseScript.Run(ctx, c, []string{key}, token).Int64()
}

// ScriptNames are the lock's Lua scripts and their names, to be shown in
// place of their hashes where a simulated run says what a worker is about
// to send (store.NameScript).
func ScriptNames() map[*redis.Script]string {
	return map[*redis.Script]string{releaseScript: "release", renewScript: "renew",
		fencedScript: "fenced-acquire", raiseScript: "fence-raise"}
}
