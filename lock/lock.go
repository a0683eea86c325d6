// Package lock implements distributed lock strategies — on Redis: none,
// naive (SETNX then EXPIRE), safe (SET NX PX + Lua compare-and-delete),
// fenced, watchdog (renewal), Redlock and optimistic (WATCH/MULTI); on one
// machine: flock and a System V semaphore — with retry and backoff
// policies. Strategies on other servers live in the sub-packages pg, mysql,
// memcached and etcd, and register themselves in the same registry.
//
// It is usable as a library and depends on the clock package alone (and
// go-redis). Every step a lock takes (attempt, acquired, denied, backoff,
// vote, renewed, renew_failed, lock_lost, release, release_failed) can be
// seen through an optional Observer, without the lock knowing who listens.
// Every duration goes through the run's clock.Clock.
package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/locklab/locklab/clock"
)

// Sentinel errors.
var (
	// ErrNotObtained means the lock is held by someone else (after any retries).
	ErrNotObtained = errors.New("lock: not obtained")
	// ErrNotHeld means a release or renewal found the lock expired or owned
	// by someone else.
	ErrNotHeld = errors.New("lock: not held")
	// ErrLockLost is the cause of a lease context cancelled because the
	// lock could not be renewed.
	ErrLockLost = errors.New("lock: lost")
	// ErrNoExtend: the lock's library has no extend of its own to call.
	ErrNoExtend = errors.New("lock: this lock has no extend of its own")
	// ErrCrashed is returned by a naive acquire that was made to crash
	// between SETNX and EXPIRE: the key is left without a TTL.
	ErrCrashed = errors.New("lock: crashed between SETNX and EXPIRE")
)

// Locker is one lock strategy.
type Locker interface {
	// Strategy is the strategy's name ("safe", "redlock", …).
	Strategy() string
	// TryAcquire makes one attempt; ErrNotObtained when the lock is taken.
	TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error)
	// Acquire attempts, then retries per the Options' Retry policy.
	Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error)
}

// Warmer is a Locker that can put on a server what its commands need
// there (a library's Lua scripts) before a story's timing matters, with
// no step: as a server that has served it before has them. key is a key
// of the run's own it may take and give back.
type Warmer interface {
	Warm(ctx context.Context, key string) error
}

// Options configure a Locker.
type Options struct {
	// Clock is the run's clock; nil means real time at speed 1.
	Clock *clock.Clock
	// Observer, if set, sees every step.
	Observer Observer
	// Retry is the retry policy of Acquire; the zero value never retries.
	Retry Retry
	// Rand drives jitter; nil means a randomly seeded source. It is used
	// by one goroutine at a time: give each worker its own Locker.
	Rand *mrand.Rand
	// Tokens is the source of random token bytes; nil means a ChaCha8
	// generator seeded from crypto/rand.
	Tokens io.Reader
	// Hold, if set, is called before each watchdog renewal and may block:
	// a stop-the-world pause of the holder pauses its renewals too.
	Hold func(ctx context.Context) error
}

// base holds what every strategy shares.
type base struct {
	clock    *clock.Clock
	observer Observer
	retry    Retry
	rng      *mrand.Rand
	tokens   io.Reader
	hold     func(ctx context.Context) error
}

var realClock = clock.NewScaledClock(1)

func newBase(o Options) base {
	b := base{clock: o.Clock, observer: o.Observer, retry: o.Retry, rng: o.Rand, tokens: o.Tokens, hold: o.Hold}
	if b.clock == nil {
		b.clock = realClock
	}
	if b.rng == nil {
		b.rng = mrand.New(mrand.NewPCG(mrand.Uint64(), mrand.Uint64()))
	}
	if b.tokens == nil {
		var seed [32]byte
		if _, err := rand.Read(seed[:]); err != nil {
			panic("lock: cannot seed the token generator: " + err.Error())
		}
		b.tokens = &lockedReader{r: mrand.NewChaCha8(seed)}
	}
	return b
}

// lockedReader makes a ChaCha8 generator safe for concurrent use.
type lockedReader struct {
	mu sync.Mutex
	r  *mrand.ChaCha8
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

func (b *base) emit(s Step) {
	if b.observer != nil {
		b.observer(s)
	}
}

// token returns 16 random bytes, hex-encoded.
func (b *base) token() (string, error) {
	var buf [16]byte
	if _, err := io.ReadFull(b.tokens, buf[:]); err != nil {
		return "", fmt.Errorf("lock: token: %w", err)
	}
	return hex.EncodeToString(buf[:]), nil
}

// ms is a TTL as whole server milliseconds, at least 1.
func (b *base) ms(ttl time.Duration) int64 {
	return max(b.clock.ToServer(ttl).Milliseconds(), 1)
}

// fail records that op on key (sent at call) answered err, and returns err
// as an *OpError that is never contention.
func (b *base) fail(op, key string, attempt, node int, call time.Duration, err error) error {
	err = opError(op, key, err)
	b.emit(Step{Kind: StepError, Key: key, Attempt: attempt, Node: node, Call: call, Op: op,
		Outcome: Classify(err), Msg: unwrapOp(err).Error()})
	return err
}

// unwrapOp is the server's own error inside an *OpError.
func unwrapOp(err error) error {
	var oe *OpError
	if errors.As(err, &oe) {
		return oe.Err
	}
	return err
}

// tryFunc is one attempt, told its attempt number.
type tryFunc func(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error)

// acquire runs try, then retries per the policy while the lock is taken.
func (b *base) acquire(ctx context.Context, key string, ttl time.Duration, try tryFunc) (*Lease, error) {
	backoff := b.retry.Backoff(b.rng)
	for attempt := 1; ; attempt++ {
		l, err := try(ctx, key, ttl, attempt)
		if err == nil || !errors.Is(err, ErrNotObtained) {
			return l, err
		}
		d, ok := backoff.Next()
		if !ok {
			return nil, err
		}
		b.emit(Step{Kind: StepBackoff, Key: key, Delay: d, Attempt: attempt, Node: -1})
		if serr := b.clock.Sleep(ctx, d); serr != nil {
			return nil, errors.Join(err, serr)
		}
	}
}

// Lease is a held lock.
type Lease struct {
	Key      string
	Token    string
	Fence    int64         // fenced only: the lock's fencing token
	TTL      time.Duration // as asked
	Validity time.Duration // Redlock: ttl − elapsed − drift; otherwise TTL
	Attempt  int           // the attempt that obtained it
	// Cell, for strategies that keep the protected value (Info.Cell), is
	// that value under this lease.
	Cell Cell

	ctx     context.Context
	cancel  context.CancelCauseFunc
	release func(ctx context.Context) error
	extend  func(ctx context.Context) error
	abandon func()
	once    sync.Once
	err     error
}

// Abandon stops whatever keeps the lock alive (a watchdog's renewals)
// without releasing it: what happens when the holder's process dies. The
// lock then lapses at its TTL.
func (l *Lease) Abandon() {
	l.once.Do(func() {
		if l.abandon != nil {
			l.abandon()
		}
		l.err = ErrNotHeld
	})
}

func newLease(parent context.Context, key, token string, ttl time.Duration, attempt int) *Lease {
	return &Lease{Key: key, Token: token, TTL: ttl, Validity: ttl, Attempt: attempt, ctx: parent}
}

// cancellable gives the lease a context of its own, cancelled on loss and
// on release (strategies that can lose a lock while it is held).
func (l *Lease) cancellable(c *clock.Clock) {
	l.ctx, l.cancel = c.WithCancelCause(l.ctx)
}

// Context is the holder's context. With a watchdog it is cancelled with
// cause ErrLockLost when the lock is lost, and on release; otherwise it is
// the context the lock was acquired with.
func (l *Lease) Context() context.Context { return l.ctx }

// Lost reports whether the lock is known to be lost.
func (l *Lease) Lost() bool { return l.cancel != nil && errors.Is(context.Cause(l.ctx), ErrLockLost) }

// Extend calls the lock's own extend, by its TTL, once: a library's
// (redislock's Refresh, redsync's Extend), which records what it sent and
// what it answered. Its error is the library's own, wrapped with
// ErrNotHeld when the library found the lock gone or another's;
// ErrNoExtend when the lock has none.
func (l *Lease) Extend(ctx context.Context) error {
	if l.extend == nil {
		return ErrNoExtend
	}
	return l.extend(ctx)
}

// Release gives the lock back. It is safe to call more than once; later calls
// return the first call's result. ErrNotHeld means it had expired or someone
// else held it.
func (l *Lease) Release(ctx context.Context) error {
	l.once.Do(func() {
		if l.release != nil {
			l.err = l.release(ctx)
		}
		if l.cancel != nil {
			l.cancel(context.Canceled)
		}
	})
	return l.err
}
