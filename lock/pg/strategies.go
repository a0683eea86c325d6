package pg

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/locklab/locklab/lock"
)

// Compile-time checks.
var (
	_ lock.Locker     = (*Advisory)(nil)
	_ lock.Locker     = (*AdvisoryXact)(nil)
	_ lock.Locker     = (*Row)(nil)
	_ lock.Locker     = (*Optimistic)(nil)
	_ lock.Locker     = (*Table)(nil)
	_ lock.CellKeeper = (*Row)(nil)
	_ lock.CellKeeper = (*Optimistic)(nil)
)

// Advisory is a session advisory lock: pg_try_advisory_lock on a
// connection held for as long as the lock is. No TTL: the lock lasts until
// pg_advisory_unlock or the end of the session.
type Advisory struct{ strategy }

// Strategy returns "pg-advisory".
func (*Advisory) Strategy() string { return "pg-advisory" }

// TryAcquire makes one attempt.
func (a *Advisory) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return a.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (a *Advisory) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return a.kit.Acquire(ctx, key, ttl, a.try)
}

func (a *Advisory) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	c, err := a.conn(ctx)
	if err != nil {
		return nil, err
	}
	id := advisoryID(key)
	a.attempt(key, 0, attempt)
	var ok bool
	if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", id).Scan(&ok); err != nil {
		drop(c)
		return nil, err
	}
	if !ok {
		c.Release()
		return nil, a.denied(key, attempt, "held")
	}
	a.sessionAcquired(key, attempt)
	return lock.NewLease(ctx, key, "", ttl, attempt, lock.LeaseFuncs{
		Release: func(ctx context.Context) error {
			call := a.kit.Now()
			var held bool
			err := c.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", id).Scan(&held)
			if err != nil {
				drop(c) // the session's end frees the lock
			} else {
				c.Release()
			}
			why := ""
			if err == nil && !held {
				why = "not held by this session"
			}
			return a.released(key, "", call, err, why)
		},
		Abandon: func() { drop(c) },
	}), nil
}

// AdvisoryXact is a transaction advisory lock: pg_try_advisory_xact_lock
// inside a transaction, freed by COMMIT (or ROLLBACK, or the session's end).
type AdvisoryXact struct{ strategy }

// Strategy returns "pg-advisory-xact".
func (*AdvisoryXact) Strategy() string { return "pg-advisory-xact" }

// TryAcquire makes one attempt.
func (a *AdvisoryXact) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return a.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (a *AdvisoryXact) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return a.kit.Acquire(ctx, key, ttl, a.try)
}

func (a *AdvisoryXact) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	c, err := a.conn(ctx)
	if err != nil {
		return nil, err
	}
	a.attempt(key, 0, attempt)
	tx, err := c.Begin(ctx)
	if err != nil {
		drop(c)
		return nil, err
	}
	var ok bool
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", advisoryID(key)).Scan(&ok); err != nil {
		drop(c)
		return nil, err
	}
	if !ok {
		err := tx.Rollback(ctx)
		if err != nil {
			drop(c)
		} else {
			c.Release()
		}
		return nil, a.denied(key, attempt, "held")
	}
	a.sessionAcquired(key, attempt)
	return lock.NewLease(ctx, key, "", ttl, attempt, lock.LeaseFuncs{
		Release: func(ctx context.Context) error {
			call := a.kit.Now()
			return a.released(key, "", call, commit(ctx, tx, c), "")
		},
		Abandon: func() { drop(c) },
	}), nil
}

// commit ends a held transaction and gives back its connection (or drops
// it when COMMIT fails, which ends the transaction all the same).
func commit(ctx context.Context, tx pgx.Tx, c interface{ Release() }) error {
	err := tx.Commit(ctx)
	if err != nil {
		if pc, ok := c.(interface{ Hijack() *pgx.Conn }); ok {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = pc.Hijack().Close(cctx)
			cancel()
			return err
		}
	}
	c.Release()
	return err
}

// Row locks the protected row itself: SELECT … FOR UPDATE NOWAIT inside a
// transaction (a locked row is denied at once, so retries show), the value
// read and written in that transaction (Lease.Cell), COMMIT frees it. A key
// without a row gets one.
type Row struct{ strategy }

// Strategy returns "pg-row".
func (*Row) Strategy() string { return "pg-row" }

// TryAcquire makes one attempt.
func (r *Row) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return r.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (r *Row) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return r.kit.Acquire(ctx, key, ttl, r.try)
}

func (r *Row) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	if _, err := r.db.Pool.Exec(ctx, `INSERT INTO `+r.db.stock+` (k, v) VALUES ($1, 0) ON CONFLICT (k) DO NOTHING`, key); err != nil {
		return nil, err
	}
	c, err := r.conn(ctx)
	if err != nil {
		return nil, err
	}
	r.attempt(key, 0, attempt)
	tx, err := c.Begin(ctx)
	if err != nil {
		drop(c)
		return nil, err
	}
	var v int64
	err = tx.QueryRow(ctx, `SELECT v FROM `+r.db.stock+` WHERE k = $1 FOR UPDATE NOWAIT`, key).Scan(&v)
	if isLockNotAvailable(err) {
		if rerr := tx.Rollback(ctx); rerr != nil {
			drop(c)
		} else {
			c.Release()
		}
		return nil, r.denied(key, attempt, "row locked")
	}
	if err != nil {
		drop(c)
		return nil, err
	}
	r.sessionAcquired(key, attempt)
	l := lock.NewLease(ctx, key, "", ttl, attempt, lock.LeaseFuncs{
		Release: func(ctx context.Context) error {
			call := r.kit.Now()
			return r.released(key, "", call, commit(ctx, tx, c), "")
		},
		Abandon: func() { drop(c) },
	})
	l.Cell = &txCell{tx: tx, db: r.db, key: key}
	return l, nil
}

// txCell is a row read and written inside the transaction that locks it.
type txCell struct {
	tx  pgx.Tx
	db  *db
	key string
}

func (t *txCell) Load(ctx context.Context) (int64, error) {
	var v int64
	err := t.tx.QueryRow(ctx, `SELECT v FROM `+t.db.stock+` WHERE k = $1`, t.key).Scan(&v)
	return v, err
}

func (t *txCell) Store(ctx context.Context, v int64) (bool, error) {
	_, err := t.tx.Exec(ctx, `UPDATE `+t.db.stock+` SET v = $2, version = version + 1 WHERE k = $1`, t.key, v)
	return err == nil, err
}

// Optimistic takes no lock: the lease's Cell reads the row's value and
// version, and writes only WHERE the version is still the one it read.
type Optimistic struct{ strategy }

// Strategy returns "pg-optimistic".
func (*Optimistic) Strategy() string { return "pg-optimistic" }

// TryAcquire takes no lock; it gives a lease whose Cell checks the version.
func (o *Optimistic) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	l := lock.NewLease(ctx, key, "", ttl, 1, lock.LeaseFuncs{})
	l.Cell = &versionCell{db: o.db, key: key}
	return l, nil
}

// Acquire is TryAcquire: there is nothing to wait for.
func (o *Optimistic) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return o.TryAcquire(ctx, key, ttl)
}

type versionCell struct {
	db      *db
	key     string
	version int64
}

func (c *versionCell) Load(ctx context.Context) (int64, error) {
	var v int64
	err := c.db.Pool.QueryRow(ctx, `SELECT v, version FROM `+c.db.stock+` WHERE k = $1`, c.key).Scan(&v, &c.version)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, errors.New("lock/pg: no row at " + c.key)
	}
	return v, err
}

func (c *versionCell) Store(ctx context.Context, v int64) (bool, error) {
	tag, err := c.db.Pool.Exec(ctx, `UPDATE `+c.db.stock+` SET v = $2, version = version + 1 WHERE k = $1 AND version = $3`, c.key, v, c.version)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// Table is the persistent lock of a lock table: a row per key with its
// owner and expiry, taken by an upsert that only wins over an expired row,
// released by deleting the row if it is still the owner's. The expiry is
// the server's clock; a holder that dies leaves the row until it expires.
type Table struct{ strategy }

// Strategy returns "pg-table".
func (*Table) Strategy() string { return "pg-table" }

// TryAcquire makes one attempt.
func (t *Table) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return t.try(ctx, key, ttl, 1)
}

// Acquire attempts and retries per the policy.
func (t *Table) Acquire(ctx context.Context, key string, ttl time.Duration) (*lock.Lease, error) {
	return t.kit.Acquire(ctx, key, ttl, t.try)
}

func (t *Table) try(ctx context.Context, key string, ttl time.Duration, attempt int) (*lock.Lease, error) {
	tok, err := t.kit.Token()
	if err != nil {
		return nil, err
	}
	t.attempt(key, ttl, attempt)
	us := max(t.kit.Real(ttl).Microseconds(), 1)
	rows, err := t.db.Pool.Query(ctx, `INSERT INTO `+t.db.locks+` AS l (k, owner, expires_at)
VALUES ($1, $2, clock_timestamp() + $3 * interval '1 microsecond')
ON CONFLICT (k) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE l.expires_at < clock_timestamp()
RETURNING owner`, key, tok, us)
	if err != nil {
		return nil, err
	}
	won := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !won {
		return nil, t.denied(key, attempt, "held")
	}
	t.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Token: tok, TTL: ttl, Attempt: attempt, Node: -1, Call: t.call})
	return lock.NewLease(ctx, key, tok, ttl, attempt, lock.LeaseFuncs{
		Release: func(ctx context.Context) error {
			call := t.kit.Now()
			tag, err := t.db.Pool.Exec(ctx, `DELETE FROM `+t.db.locks+` WHERE k = $1 AND owner = $2`, key, tok)
			why := ""
			if err == nil && tag.RowsAffected() == 0 {
				why = "expired"
			}
			return t.released(key, tok, call, err, why)
		},
	}), nil
}
