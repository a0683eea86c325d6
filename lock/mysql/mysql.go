// Package mysql implements the mysql-get-lock strategy: MySQL's (and
// MariaDB's) named locks, GET_LOCK on a connection of its own, released
// with RELEASE_LOCK or by the end of the session.
package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"time"

	mystore "github.com/locklab/locklab/store/mysql"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/store"
)

// Register adds the strategy to lock's registry; lock/all calls it once
// for every program that runs the catalogue.
func Register() {
	mystore.Register()
	lock.Register(lock.Info{Name: "mysql-get-lock", Doc: "MySQL GET_LOCK(name, 0) on its own session: freed by RELEASE_LOCK or the session's end",
		Traits: trait.Traits{Server: lock.ServerMySQL, Expiry: trait.ExpirySession, Token: trait.TokenNone, Renewal: trait.RenewalNone,
			Nodes: trait.Nodes{Min: 1, Default: 1}, Excludes: true}},
		func(s lock.Servers, o lock.Options) (lock.Locker, error) {
			if s.Conn == nil {
				return nil, &store.NotConfiguredError{Kind: store.ServerMySQL}
			}
			v, err := s.Conn(lock.ServerMySQL)
			if err != nil {
				return nil, err
			}
			m, ok := v.(*mystore.Conn)
			if !ok {
				return nil, fmt.Errorf("lock/mysql: want a *mystore.Conn, got %T", v)
			}
			return New(m.DB, o), nil
		})
}

// GetLock is a named lock held by a session: GET_LOCK with a zero timeout
// (a held lock is denied at once, so retries show), RELEASE_LOCK to give it
// back. No TTL: a holder that pauses keeps it; one whose connection drops
// frees it at once.
type GetLock struct {
	kit *lock.Kit
	db  *sql.DB
}

var _ lock.Locker = (*GetLock)(nil)

// New returns the mysql-get-lock strategy on db.
func New(db *sql.DB, o lock.Options) *GetLock { return &GetLock{kit: lock.NewKit(o), db: db} }

// Strategy returns "mysql-get-lock".
func (*GetLock) Strategy() string { return "mysql-get-lock" }

// TryAcquire makes one attempt.
func (g *GetLock) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return g.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (g *GetLock) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return g.kit.Acquire(ctx, key, ttl, g.try)
}

// lockName is key as a lock name: at most 64 characters.
func lockName(key string) string {
	if len(key) <= 64 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "locklab:" + hex.EncodeToString(sum[:28])
}

// drop discards a connection: the server ends its session and frees every
// lock the session holds.
func drop(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
}

func (g *GetLock) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	c, err := g.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	name := lockName(key)
	// No TTL and no token: the session holds the lock.
	g.kit.Emit(lock.Step{Kind: lock.StepAttempt, Key: key, Attempt: attempt, Node: -1})
	call := g.kit.Now()
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil {
		drop(c)
		return nil, err
	}
	if !got.Valid || got.Int64 != 1 {
		c.Close()
		g.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: "held", Call: call})
		return nil, lock.ErrNotObtained
	}
	g.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Attempt: attempt, Node: -1, Call: call})
	return lock.NewLease(ctx, key, "", ttl, attempt, lock.LeaseFuncs{
		Release: func(ctx context.Context) error {
			call := g.kit.Now()
			var freed sql.NullInt64
			err := c.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", name).Scan(&freed)
			if err != nil {
				drop(c) // the session's end frees the lock
				g.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Node: -1, Msg: err.Error(), Call: call})
				return err
			}
			c.Close()
			if !freed.Valid || freed.Int64 != 1 {
				g.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Node: -1, Msg: "not held by this session", Call: call})
				return lock.ErrNotHeld
			}
			g.kit.Emit(lock.Step{Kind: lock.StepRelease, Key: key, Node: -1, OK: true, Call: call})
			return nil
		},
		Abandon: func() { drop(c) },
	}), nil
}
