// Package etcd implements the etcd strategy: the client's concurrency
// mutex over a lease, on a real etcd (the run's embedded members, or the
// user's cluster). The answer of the critique of Redlock: a consensus
// system, and a fencing token it hands out.
//
// Each attempt grants a lease whose TTL is the run's TTL (etcd counts
// whole seconds, and its leader may round a short TTL up to its minimum)
// and tries the mutex once (TryLock): the waiter whose key under the lock's
// prefix was created first holds it. While held, the lease is renewed every
// third of the TTL; Options.Hold pauses those renewals with the holder, so
// a holder paused past its lease loses the lock: etcd deletes its key, and
// the lease's context is cancelled with cause lock.ErrLockLost.
//
// The fence is the lock key's create revision, in Lease.Fence: etcd's
// revision grows with every write to the cluster, so a later holder always
// has a larger fence. A scenario fences a write in one of two ways:
//
//   - on the resource: pass Lease.Fence as a fencing token, as with the
//     fenced strategy (the resource refuses a token below one it has seen);
//   - on etcd itself: (*Mutex).Put writes a key in the same transaction that
//     checks the lock key still has that create revision, so a holder whose
//     lease lapsed writes nothing, even before anyone else took the lock.
//
// A strategy from the registry is a lock.Locker; assert it to *Mutex for
// Put. Lease.Token is the lease's ID in hex.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Name is the strategy's name in the registry.
const Name = "etcd"

// Register adds the strategy to lock's registry; lock/all calls it once
// for every program that runs the catalogue.
func Register() {
	lock.Register(lock.Info{Name: Name, Doc: "etcd mutex over a lease of the TTL, renewed while held; fence = the key's create revision",
		Traits: trait.Traits{Server: lock.ServerEtcd, Expiry: trait.ExpiryLease, Token: trait.TokenRevision, Renewal: trait.RenewalKeepAlive,
			Unit: 1000, Nodes: trait.Nodes{Min: 1, Default: 1}, Excludes: true, Queued: true}},
		func(s lock.Servers, o lock.Options) (lock.Locker, error) {
			if s.Conn == nil {
				return nil, &store.NotConfiguredError{Kind: store.ServerEtcd}
			}
			v, err := s.Conn(lock.ServerEtcd)
			if err != nil {
				return nil, err
			}
			e, ok := v.(*store.Etcd)
			if !ok {
				return nil, fmt.Errorf("lock/etcd: want a *store.Etcd, got %T", v)
			}
			return New(e, o), nil
		})
}

// Mutex is the etcd strategy on one run's etcd.
type Mutex struct {
	kit *lock.Kit
	e   *store.Etcd
}

var _ lock.Locker = (*Mutex)(nil)

// New returns the etcd strategy on e.
func New(e *store.Etcd, o lock.Options) *Mutex { return &Mutex{kit: lock.NewKit(o), e: e} }

// Strategy returns "etcd".
func (*Mutex) Strategy() string { return Name }

// TryAcquire makes one attempt.
func (m *Mutex) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return m.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (m *Mutex) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return m.kit.Acquire(ctx, key, ttl, m.try)
}

// seconds is a TTL as etcd's whole seconds, rounded up.
func seconds(d time.Duration) int64 { return int64(max(math.Ceil(d.Seconds()), 1)) }

// prefix is where the waiters for key put their keys.
func (m *Mutex) prefix(key string) string { return m.e.Prefix + key }

// ownerKey is the key l's holder put under the lock's prefix.
func (m *Mutex) ownerKey(l *lock.Lease) string { return m.prefix(l.Key) + "/" + l.Token }

func (m *Mutex) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.kit.Emit(lock.Step{Kind: lock.StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	c := m.e.Client
	call := m.kit.Now()
	g, err := c.Grant(ctx, seconds(m.kit.Real(ttl)))
	if err != nil {
		return nil, m.fail("acquire", key, attempt, call, err)
	}
	m.e.Granted(g.ID)
	revoke := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if _, err := c.Revoke(rctx, g.ID); err == nil || isLeaseGone(err) {
			m.e.Revoked(g.ID)
		}
	}
	s, err := concurrency.NewSession(c, concurrency.WithLease(g.ID), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		revoke()
		return nil, m.fail("acquire", key, attempt, call, err)
	}
	s.Orphan() // the lease is renewed below, where a paused holder pauses it
	mu := concurrency.NewMutex(s, m.prefix(key))
	if err := mu.TryLock(ctx); err != nil {
		revoke()
		if errors.Is(err, concurrency.ErrLocked) {
			m.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Call: call, Msg: "held"})
			return nil, lock.ErrNotObtained
		}
		return nil, m.fail("acquire", key, attempt, call, err)
	}
	// The key is new to this lease: the transaction that made it holds
	// the lock, and its revision is the key's create revision.
	fence := mu.Header().Revision
	tok := strconv.FormatInt(int64(g.ID), 16)
	// The lease etcd granted, in its whole seconds (its leader may round a
	// short TTL up to its minimum), as the run counts time.
	granted := m.kit.Virtual(time.Duration(g.TTL) * time.Second)
	m.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: tok, Fence: fence, TTL: granted, Attempt: attempt, Node: -1, Call: call})
	stop, done := make(chan struct{}), make(chan struct{})
	var l *lock.Lease
	halt := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	}
	l = lock.NewLease(ctx, key, tok, ttl, attempt, lock.LeaseFuncs{
		Losable: true,
		Abandon: halt, // the lease lapses at its TTL, as when the holder dies
		Release: func(ctx context.Context) error {
			halt()
			return m.release(ctx, l, g.ID)
		},
	})
	l.Fence = fence
	go func() {
		defer close(done)
		m.renew(l, g.ID, call, stop)
	}()
	return l, nil
}

// release revokes the lease, which deletes the holder's key; a lease
// already gone means the lock had lapsed.
func (m *Mutex) release(ctx context.Context, l *lock.Lease, id clientv3.LeaseID) error {
	call := m.kit.Now()
	_, err := m.e.Client.Revoke(ctx, id)
	switch {
	case err == nil:
		m.e.Revoked(id)
		m.kit.Emit(lock.Step{Kind: lock.StepRelease, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, OK: true, Call: call})
		return nil
	case isLeaseGone(err):
		m.e.Revoked(id)
		m.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Call: call, Msg: "expired"})
		return lock.ErrNotHeld
	}
	m.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Call: call, Msg: oneLine(err)})
	return &lock.OpError{Op: "release", Key: l.Key, Outcome: outcome(err), Err: err}
}

// renew keeps the lease alive every third of the TTL until stop closes or
// the holder's context ends (then the lease lapses at its TTL, as a dead
// holder's does), pausing while the holder is paused. When etcd no longer knows the lease,
// or no renewal succeeded for a whole TTL, the lock is lost.
func (m *Mutex) renew(l *lock.Lease, id clientv3.LeaseID, lastOK time.Duration, stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(l.Context())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	every := max(l.TTL/3, time.Millisecond)
	for {
		if m.kit.Sleep(ctx, every) != nil || m.kit.Hold(ctx) != nil {
			return
		}
		sent := m.kit.Now()
		rctx, rcancel := context.WithTimeout(ctx, max(m.kit.Real(l.TTL), time.Second))
		r, err := m.e.Client.KeepAliveOnce(rctx, id)
		rcancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil && r.TTL > 0:
			lastOK = sent
			m.kit.Emit(lock.Step{Kind: lock.StepRenewed, Key: l.Key, Token: l.Token, Fence: l.Fence,
				TTL: m.kit.Virtual(time.Duration(r.TTL) * time.Second), Node: -1, Call: sent})
			continue
		case err == nil || isLeaseGone(err):
			m.e.Revoked(id)
			m.kit.Emit(lock.Step{Kind: lock.StepRenewFailed, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Call: sent, Msg: "lease expired"})
			m.kit.Lose(l, "lease expired")
			return
		}
		m.kit.Emit(lock.Step{Kind: lock.StepRenewFailed, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Call: sent,
			Op: "renew", Outcome: outcome(err), Msg: oneLine(err)})
		if m.kit.Now()-lastOK >= l.TTL {
			m.kit.Lose(l, "no renewal for a whole TTL")
			return
		}
	}
}

// Put writes value at key, under the run's prefix, only if l still holds
// the lock: one transaction compares the lock key's create revision with
// l.Fence. False (and no error) means the lock had lapsed and nothing was
// written.
func (m *Mutex) Put(ctx context.Context, l *lock.Lease, key, value string) (bool, error) {
	r, err := m.e.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(m.ownerKey(l)), "=", l.Fence)).
		Then(clientv3.OpPut(m.e.Prefix+key, value)).
		Commit()
	if err != nil {
		return false, &lock.OpError{Op: "write", Key: key, Outcome: outcome(err), Err: err}
	}
	return r.Succeeded, nil
}

// Get reads key under the run's prefix ("" when absent).
func (m *Mutex) Get(ctx context.Context, key string) (string, error) {
	r, err := m.e.Client.Get(ctx, m.e.Prefix+key)
	if err != nil || len(r.Kvs) == 0 {
		return "", err
	}
	return string(r.Kvs[0].Value), nil
}

// fail records an operation etcd did not answer with a lock's answer.
func (m *Mutex) fail(op, key string, attempt int, call time.Duration, err error) error {
	if errors.Is(err, context.Canceled) {
		return err // the run is over: nothing failed
	}
	oe := &lock.OpError{Op: op, Key: key, Outcome: outcome(err), Err: err}
	m.kit.Emit(lock.Step{Kind: lock.StepError, Key: key, Attempt: attempt, Node: -1, Call: call, Op: op,
		Outcome: oe.Outcome, Msg: oneLine(err)})
	return oe
}

// isLeaseGone reports etcd's answer for a lease it no longer knows.
func isLeaseGone(err error) bool {
	return status.Code(err) == codes.NotFound || strings.Contains(err.Error(), "requested lease not found")
}

// outcome is how an etcd call that returned err ended: an answer from etcd
// itself failed it; anything else may have landed.
func outcome(err error) lock.Outcome {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.NotFound, codes.PermissionDenied,
		codes.Unauthenticated, codes.ResourceExhausted, codes.OutOfRange:
		return lock.Failed
	}
	return lock.Indeterminate
}

func oneLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
