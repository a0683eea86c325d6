// Package etcd implements the etcd strategy: the client's concurrency
// mutex over a lease, on a real etcd (the run's embedded members, or the
// user's cluster). The answer of the critique of Redlock: a consensus
// system, and a fencing token it hands out.
//
// Each worker (each Mutex) has one lease, as concurrency.Session has: its
// TTL is the run's TTL (etcd counts whole seconds, and its leader may round
// a short TTL up to its minimum), granted at its first lock and reused by
// the next ones, so a lock cycle is two round trips: the mutex's TryLock
// (the waiter whose key under the lock's prefix was created first holds
// it) and the delete of the holder's key. While a lock is held, the lease
// is renewed every third of the TTL; Options.Hold pauses those renewals
// with the holder, so a holder paused past its lease loses the lock: etcd
// deletes its key, and the lease's context is cancelled with cause
// lock.ErrLockLost. A crashed holder (Lease.Abandon) renews no more: its
// lease lapses at its TTL with its locks. Only then, or after a pause, does
// the worker's next lock grant a new lease — the lessons that need a lease
// per lock (a crash freeing the lock after its TTL, a pause past it) see
// exactly that; an idle worker's lease is renewed at its next lock when
// less than half its TTL is left.
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
// Put. Lease.Token is the lease's ID in hex, @, the fence: 694d8c1e2f4a1b03@42.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	etcdstore "github.com/locklab/locklab/store/etcd"

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
	etcdstore.Register()
	lock.RegisterElection(lock.ServerEtcd, newCandidate)
	lock.Register(lock.Info{Name: Name, Doc: "etcd mutex over the worker's lease of the TTL (reused; a new one after a crash or a pause lapses it), renewed while held; fence = the key's create revision",
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
			e, ok := v.(*etcdstore.Conn)
			if !ok {
				return nil, fmt.Errorf("lock/etcd: want a *etcdstore.Conn, got %T", v)
			}
			return New(e, o), nil
		})
}

// Mutex is the etcd strategy on one run's etcd.
type Mutex struct {
	kit *lock.Kit
	e   *etcdstore.Conn

	mu sync.Mutex
	s  *session // the worker's lease, reused by its locks while alive
}

var _ lock.Locker = (*Mutex)(nil)

// New returns the etcd strategy on e.
func New(e *etcdstore.Conn, o lock.Options) *Mutex { return &Mutex{kit: lock.NewKit(o), e: e} }

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

func (m *Mutex) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.kit.Emit(lock.Step{Kind: lock.StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	call := m.kit.Now()
	s, left, fence, err := m.lockOn(ctx, key, seconds(m.kit.Real(ttl)))
	if errors.Is(err, concurrency.ErrLocked) {
		m.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Call: call, Msg: "held"})
		return nil, lock.ErrNotObtained
	}
	if err != nil {
		return nil, m.fail("acquire", key, attempt, call, err)
	}
	tok := strconv.FormatInt(int64(s.id), 16) + "@" + strconv.FormatInt(fence, 10)
	m.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: tok, Fence: fence, TTL: left, Attempt: attempt, Node: -1, Call: call})
	// The release (or a crash) ends the holding at once, without waiting
	// for the renewer to notice: nothing it says after counts.
	h := &holding{}
	rctx, stop := context.WithCancel(ctx)
	var l *lock.Lease
	l = lock.NewLease(ctx, key, tok, ttl, attempt, lock.LeaseFuncs{
		Losable: true,
		// The holder's process dies: its lease is renewed no more, and
		// lapses at its TTL with every lock it holds.
		Abandon: func() {
			m.abandon(s)
			h.end()
			stop()
		},
		Release: func(ctx context.Context) error {
			h.end()
			stop()
			return m.release(ctx, l, s)
		},
	})
	l.Fence = fence
	go m.renew(rctx, l, s, h, call)
	return l, nil
}

// holding is a lock's renewer's right to speak: over once the lock is
// released or abandoned.
type holding struct {
	mu   sync.Mutex
	over bool
}

// say runs f unless the holding is over, and reports whether it did.
func (h *holding) say(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.over {
		f()
	}
	return !h.over
}

func (h *holding) end() {
	h.mu.Lock()
	h.over = true
	h.mu.Unlock()
}

// lockOn takes the lock on key under the worker's lease (granted if it has
// none alive of secs seconds) and answers how long the lease has left and
// the lock's fence, or concurrency.ErrLocked when another holds it. The lock is a key under
// the lock's prefix named after the lease: whoever's key was created first
// holds it, as concurrency.Mutex decides.
func (m *Mutex) lockOn(ctx context.Context, key string, secs int64) (*session, time.Duration, int64, error) {
	for again := true; ; again = false {
		s, left, err := m.session(ctx, secs)
		if err != nil {
			return nil, 0, 0, err
		}
		fence, err := m.tryLock(ctx, key, s)
		if err != nil && isLeaseGone(err) && again {
			m.lapsed(s) // it lapsed while the worker was idle: one new lease
			continue
		}
		return s, left, fence, err
	}
}

// tryLock is concurrency.Mutex's TryLock on the worker's lease: put the
// waiter's key if absent and read the first waiter, in one transaction; a
// waiter not first deletes its key again.
func (m *Mutex) tryLock(ctx context.Context, key string, s *session) (int64, error) {
	c, prefix := m.e.Client, m.prefix(key)
	own := s.ownerKey(prefix)
	cmp := clientv3.Compare(clientv3.CreateRevision(own), "=", 0)
	put := clientv3.OpPut(own, "", clientv3.WithLease(s.id))
	getOwn := clientv3.OpGet(own)
	first := clientv3.OpGet(prefix+"/", clientv3.WithFirstCreate()...)
	r, err := c.Txn(ctx).If(cmp).Then(put, getOwn, first).Else(getOwn, first).Commit()
	if err != nil {
		return 0, err
	}
	// Then answers put, getOwn, first; Else (the key was there) getOwn, first.
	at := 0
	if r.Succeeded {
		at = 1
	}
	if len(r.Responses) < at+2 {
		return 0, errors.New("etcd answered the lock's transaction with fewer replies than it asked")
	}
	mine := r.Responses[at].GetResponseRange().Kvs
	if len(mine) == 0 {
		return 0, errors.New("etcd answered the lock's transaction without the waiter's key")
	}
	rev := mine[0].CreateRevision
	if kvs := r.Responses[at+1].GetResponseRange().Kvs; len(kvs) == 0 || kvs[0].CreateRevision == rev {
		return rev, nil
	}
	if r.Succeeded { // this waiter put its key: take it back
		if _, err := c.Delete(ctx, own); err != nil {
			return 0, err
		}
	}
	return 0, concurrency.ErrLocked
}

// release deletes the holder's key; a key already gone means the lock had
// lapsed with its lease.
func (m *Mutex) release(ctx context.Context, l *lock.Lease, s *session) error {
	call := m.kit.Now()
	r, err := m.e.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.ownerKey(m.prefix(l.Key))), "=", l.Fence)).
		Then(clientv3.OpDelete(s.ownerKey(m.prefix(l.Key)))).
		Commit()
	switch {
	case err == nil && r.Succeeded:
		m.kit.Emit(lock.Step{Kind: lock.StepRelease, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, OK: true, Call: call})
		return nil
	case err == nil:
		m.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Call: call, Msg: "expired"})
		return lock.ErrNotHeld
	}
	m.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Call: call, Msg: oneLine(err)})
	return &lock.OpError{Op: "release", Key: l.Key, Outcome: outcome(err), Err: err}
}

// renew keeps the lease alive every third of the TTL while l is held,
// until ctx ends (the release, a crash, or the holder's context: then the
// lease lapses at its TTL, as a dead holder's does), pausing while the
// holder is paused. When etcd no longer knows the lease, or no renewal
// succeeded for a whole TTL, the lock is lost. What it finds after the
// holding ended (h) goes unsaid.
func (m *Mutex) renew(ctx context.Context, l *lock.Lease, s *session, h *holding, lastOK time.Duration) {
	every := max(l.TTL/3, time.Millisecond)
	for {
		if m.kit.Sleep(ctx, every) != nil || m.kit.Hold(ctx) != nil || m.isAbandoned(s) {
			return
		}
		sent := m.kit.Now()
		rctx, rcancel := context.WithTimeout(ctx, max(m.kit.Real(l.TTL), time.Second))
		r, err := m.e.Client.KeepAliveOnce(rctx, s.id)
		rcancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil && r.TTL > 0:
			lastOK = sent
			m.renewed(s, sent, r.TTL)
			if !h.say(func() {
				m.kit.Emit(lock.Step{Kind: lock.StepRenewed, Key: l.Key, Token: l.Token, Fence: l.Fence,
					TTL: m.kit.Virtual(time.Duration(r.TTL) * time.Second), Node: -1, Call: sent})
			}) {
				return
			}
			continue
		case err == nil || isLeaseGone(err):
			m.lapsed(s)
			h.say(func() {
				m.kit.Emit(lock.Step{Kind: lock.StepRenewFailed, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Call: sent, Msg: "lease expired"})
				m.kit.Lose(l, "lease expired")
			})
			return
		}
		lost := false
		if !h.say(func() {
			m.kit.Emit(lock.Step{Kind: lock.StepRenewFailed, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Call: sent,
				Op: "renew", Outcome: outcome(err), Msg: oneLine(err)})
			if lost = m.kit.Now()-lastOK >= l.TTL; lost {
				m.kit.Lose(l, "no renewal for a whole TTL")
			}
		}) || lost {
			return
		}
	}
}

// ownerKey is the key l's holder put under the lock's prefix: named after
// its lease, the token's part before the @.
func (m *Mutex) ownerKey(l *lock.Lease) string {
	id, _, _ := strings.Cut(l.Token, "@")
	return m.prefix(l.Key) + "/" + id
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
