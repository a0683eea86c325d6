// Package memcached implements the memcached-add strategy: memcached's add,
// which stores a key only if it is absent, with an expiry in whole seconds.
package memcached

import (
	"context"
	"fmt"
	"math"
	"time"

	mcstore "github.com/locklab/locklab/store/memcached"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/store"
)

// Register adds the strategy to lock's registry; lock/all calls it once
// for every program that runs the catalogue.
func Register() {
	mcstore.Register()
	lock.Register(lock.Info{Name: "memcached-add", Doc: "memcached add key token (only if absent), expiry in whole seconds; release deletes only if the CAS value is still the holder's",
		Traits: trait.Traits{Server: lock.ServerMemcached, Expiry: trait.ExpiryTTL, Token: trait.TokenRandom, Renewal: trait.RenewalNone,
			Unit: 1000, Nodes: trait.Nodes{Min: 1, Default: 1}, Excludes: true, OwnClock: true}},
		func(s lock.Servers, o lock.Options) (lock.Locker, error) {
			if s.Conn == nil {
				return nil, &store.NotConfiguredError{Kind: store.ServerMemcached}
			}
			v, err := s.Conn(lock.ServerMemcached)
			if err != nil {
				return nil, err
			}
			m, ok := v.(*mcstore.Conn)
			if !ok {
				return nil, fmt.Errorf("lock/memcached: want a *mcstore.Conn, got %T", v)
			}
			return New(m, o), nil
		})
}

// Add is a lock taken by memcached's add: the key is stored with the
// holder's token only if no one holds it, and expires after the TTL,
// rounded up to whole seconds plus one (memcached's clock ticks once a
// second). The add answers the item's CAS value (memcached's meta
// protocol), and release deletes the key only if its CAS value is still
// that one: two round trips a cycle, and a release never deletes another
// holder's lock, even one taken after this holder's expired. What memcached
// cannot do is fence: its CAS value is the holder's own, not an order the
// resource could check, and nothing renews the lock.
type Add struct {
	kit *lock.Kit
	m   *mcstore.Conn
}

var _ lock.Locker = (*Add)(nil)

// New returns the memcached-add strategy on m.
func New(m *mcstore.Conn, o lock.Options) *Add { return &Add{kit: lock.NewKit(o), m: m} }

// Strategy returns "memcached-add".
func (*Add) Strategy() string { return "memcached-add" }

// TryAcquire makes one attempt.
func (a *Add) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return a.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (a *Add) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return a.kit.Acquire(ctx, key, ttl, a.try)
}

// seconds is a TTL as memcached's whole seconds: rounded up, plus one,
// because memcached's clock ticks once a second and an item may expire up
// to a second early.
func seconds(d time.Duration) int32 {
	return int32(min(max(math.Ceil(d.Seconds()), 1)+1, 30*24*3600))
}

func (a *Add) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tok, err := a.kit.Token()
	if err != nil {
		return nil, err
	}
	// The TTL memcached keeps: whole seconds, as the run counts time.
	secs := seconds(a.kit.Real(ttl))
	kept := a.kit.Virtual(time.Duration(secs) * time.Second)
	a.kit.Emit(lock.Step{Kind: lock.StepAttempt, Key: key, TTL: kept, Attempt: attempt, Node: -1})
	a.m.Created(key)
	call := a.kit.Now()
	cas, stored, err := a.m.Meta.AddCAS(key, []byte(tok), secs)
	if err != nil {
		return nil, err
	}
	if !stored {
		a.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held", Call: call})
		return nil, lock.ErrNotObtained
	}
	a.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: tok, TTL: kept, Attempt: attempt, Node: -1, Call: call})
	return lock.NewLease(ctx, key, tok, ttl, attempt, lock.LeaseFuncs{
		Release: func(context.Context) error { return a.release(key, tok, cas) },
	}), nil
}

// release deletes key only if it still holds the holder's CAS value.
func (a *Add) release(key, tok string, cas uint64) error {
	call := a.kit.Now()
	got, err := a.m.Meta.DeleteCAS(key, cas)
	if err != nil {
		a.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: err.Error(), Call: call})
		return err
	}
	switch got {
	case mcstore.NotFound:
		a.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: "expired", Call: call})
		return lock.ErrNotHeld
	case mcstore.CASMoved:
		a.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: "held by another owner", Call: call})
		return lock.ErrNotHeld
	}
	a.kit.Emit(lock.Step{Kind: lock.StepRelease, Key: key, Token: tok, Node: -1, OK: true, Call: call})
	return nil
}
