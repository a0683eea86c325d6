// Package memcached implements the memcached-add strategy: memcached's add,
// which stores a key only if it is absent, with an expiry in whole seconds.
package memcached

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/store"
)

// Register adds the strategy to lock's registry; lock/all calls it once
// for every program that runs the catalogue.
func Register() {
	lock.Register(lock.Info{Name: "memcached-add", Doc: "memcached add key token (only if absent), expiry in whole seconds; release checks then deletes",
		Traits: trait.Traits{Server: lock.ServerMemcached, Expiry: trait.ExpiryTTL, Token: trait.TokenRandom, Renewal: trait.RenewalNone,
			Unit: 1000, Nodes: trait.Nodes{Min: 1, Default: 1}, Excludes: true}},
		func(s lock.Servers, o lock.Options) (lock.Locker, error) {
			if s.Conn == nil {
				return nil, &store.NotConfiguredError{Kind: store.ServerMemcached}
			}
			v, err := s.Conn(lock.ServerMemcached)
			if err != nil {
				return nil, err
			}
			m, ok := v.(*store.Memcached)
			if !ok {
				return nil, fmt.Errorf("lock/memcached: want a *store.Memcached, got %T", v)
			}
			return New(m, o), nil
		})
}

// Add is a lock taken by memcached's add: the key is stored with the
// holder's token only if no one holds it, and expires after the TTL,
// rounded up to whole seconds plus one (memcached's clock ticks once a
// second). Release reads the
// key and deletes it if it still holds the token: two commands, so a lock
// that expires between them and is taken by another can be deleted — the
// gap that Redis closes with a Lua script and memcached cannot.
type Add struct {
	kit *lock.Kit
	m   *store.Memcached
}

var _ lock.Locker = (*Add)(nil)

// New returns the memcached-add strategy on m.
func New(m *store.Memcached, o lock.Options) *Add { return &Add{kit: lock.NewKit(o), m: m} }

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
	err = a.m.Client.Add(&memcache.Item{Key: key, Value: []byte(tok), Expiration: secs})
	if errors.Is(err, memcache.ErrNotStored) {
		a.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held", Call: call})
		return nil, lock.ErrNotObtained
	}
	if err != nil {
		return nil, err
	}
	a.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: tok, TTL: kept, Attempt: attempt, Node: -1, Call: call})
	return lock.NewLease(ctx, key, tok, ttl, attempt, lock.LeaseFuncs{
		Release: func(context.Context) error {
			call := a.kit.Now()
			it, err := a.m.Client.Get(key)
			why := ""
			switch {
			case errors.Is(err, memcache.ErrCacheMiss):
				err, why = nil, "expired"
			case err != nil:
			case string(it.Value) != tok:
				why = "held by another owner"
			default:
				err = a.m.Client.Delete(key)
				if errors.Is(err, memcache.ErrCacheMiss) {
					err, why = nil, "expired"
				}
			}
			switch {
			case err != nil:
				a.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: err.Error(), Call: call})
				return err
			case why != "":
				a.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: why, Call: call})
				return lock.ErrNotHeld
			}
			a.kit.Emit(lock.Step{Kind: lock.StepRelease, Key: key, Token: tok, Node: -1, OK: true, Call: call})
			return nil
		},
	}), nil
}
