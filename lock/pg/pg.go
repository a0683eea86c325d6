// Package pg implements lock strategies on PostgreSQL: session and
// transaction advisory locks, a row lock (SELECT … FOR UPDATE), optimistic
// concurrency on a version column, and a lock table with owner and expiry.
// Each runs on the run's *pgstore.Conn; every table it makes lives in the
// run's schema, which the store drops when the run ends.
package pg

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	pgstore "github.com/locklab/locklab/store/postgres"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/trait"
	"github.com/locklab/locklab/store"
)

// Register adds the strategy to lock's registry; lock/all calls it once
// for every program that runs the catalogue.
func Register() {
	pgstore.Register()
	one := trait.Nodes{Min: 1, Default: 1}
	session := trait.Traits{Expiry: trait.ExpirySession, Token: trait.TokenNone, Renewal: trait.RenewalNone, Nodes: one, Excludes: true}
	reg := func(name, doc string, t trait.Traits, mk func(*db, lock.Options) lock.Locker) {
		t.Server = lock.ServerPostgres
		lock.Register(lock.Info{Name: name, Doc: doc, Traits: t},
			func(s lock.Servers, o lock.Options) (lock.Locker, error) {
				d, err := open(s)
				if err != nil {
					return nil, err
				}
				return mk(d, o), nil
			})
	}
	reg("pg-advisory", "pg_try_advisory_lock on its own session: freed when the session ends", session,
		func(d *db, o lock.Options) lock.Locker { return &Advisory{strategy{kit: lock.NewKit(o), db: d}} })
	reg("pg-advisory-xact", "pg_try_advisory_xact_lock in a transaction: freed at COMMIT", session,
		func(d *db, o lock.Options) lock.Locker { return &AdvisoryXact{strategy{kit: lock.NewKit(o), db: d}} })
	row := session
	row.Cell = true
	reg("pg-row", "SELECT … FOR UPDATE NOWAIT on the stock row; the stock lives in Postgres", row,
		func(d *db, o lock.Options) lock.Locker { return &Row{strategy{kit: lock.NewKit(o), db: d}} })
	reg("pg-optimistic", "no lock: UPDATE … WHERE version = $n refuses a write after another",
		trait.Traits{Expiry: trait.ExpiryNone, Token: trait.TokenNone, Renewal: trait.RenewalNone, Nodes: one, Cell: true, Optimistic: true},
		func(d *db, o lock.Options) lock.Locker { return &Optimistic{strategy{kit: lock.NewKit(o), db: d}} })
	reg("pg-table", "a lock row with owner and expiry; an upsert wins only over an expired row",
		trait.Traits{Expiry: trait.ExpiryTTL, Token: trait.TokenRandom, Renewal: trait.RenewalNone, Unit: 1, Nodes: one, Excludes: true, OwnClock: true},
		func(d *db, o lock.Options) lock.Locker { return &Table{strategy{kit: lock.NewKit(o), db: d}} })
}

// db is the run's Postgres with its tables made.
type db struct {
	*pgstore.Conn
	stock, locks string // quoted table names
}

var made = struct {
	sync.Mutex
	by map[*pgstore.Conn]*db
}{by: map[*pgstore.Conn]*db{}}

// open makes the run's tables on first use.
func open(s lock.Servers) (*db, error) {
	if s.Conn == nil {
		return nil, &store.NotConfiguredError{Kind: store.ServerPostgres}
	}
	v, err := s.Conn(lock.ServerPostgres)
	if err != nil {
		return nil, err
	}
	p, ok := v.(*pgstore.Conn)
	if !ok {
		return nil, fmt.Errorf("lock/pg: want a *pgstore.Conn, got %T", v)
	}
	d, fresh, err := setup(context.Background(), p)
	if err == nil && fresh && s.Cleanup != nil {
		s.Cleanup(func() { forget(p) })
	}
	return d, err
}

// setup makes the tables the strategies use in p's schema (once per p;
// fresh the first time).
func setup(ctx context.Context, p *pgstore.Conn) (d *db, fresh bool, err error) {
	made.Lock()
	defer made.Unlock()
	if d, ok := made.by[p]; ok {
		return d, false, nil
	}
	d = &db{Conn: p, stock: p.Table("stock"), locks: p.Table("locks")}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = p.Pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+d.stock+` (k text PRIMARY KEY, v bigint NOT NULL, version bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS `+d.locks+` (k text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)`)
	if err != nil {
		return nil, false, fmt.Errorf("lock/pg: make the run's tables: %w", err)
	}
	made.by[p] = d
	return d, true, nil
}

// forget drops the memory of p's tables (the store dropped its schema).
func forget(p *pgstore.Conn) {
	made.Lock()
	delete(made.by, p)
	made.Unlock()
}

// strategy is what every Postgres strategy holds.
type strategy struct {
	kit  *lock.Kit
	db   *db
	call time.Duration // when the attempt under way was sent
}

// Cells keeps values in the run's stock table.
func (s *strategy) Cells() lock.Cells { return cells{s.db} }

// advisoryID maps a key (with its run prefix) to an advisory lock's bigint.
func advisoryID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int64(h.Sum64())
}

// conn takes a connection of its own from the pool.
func (s *strategy) conn(ctx context.Context) (*pgxpool.Conn, error) { return s.db.Pool.Acquire(ctx) }

// drop closes a held connection: the server ends its session, and with it
// every lock the session holds — what happens when the holder's process
// dies.
func drop(c *pgxpool.Conn) {
	pc := c.Hijack()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = pc.Close(ctx)
}

// attempt runs the common start of an attempt (ttl 0: a lock with none,
// held as long as its session).
func (s *strategy) attempt(key string, ttl time.Duration, attempt int) {
	s.kit.Emit(lock.Step{Kind: lock.StepAttempt, Key: key, TTL: ttl, Attempt: attempt, Node: -1})
	s.call = s.kit.Now()
}

func (s *strategy) denied(key string, attempt int, why string) error {
	s.kit.Emit(lock.Step{Kind: lock.StepDenied, Key: key, Attempt: attempt, Node: -1, Msg: why, Call: s.call})
	return lock.ErrNotObtained
}

// sessionAcquired records a lock held by its session: no TTL, no token.
func (s *strategy) sessionAcquired(key string, attempt int) {
	s.kit.Emit(lock.Step{Kind: lock.StepAcquired, Key: key, Attempt: attempt, Node: -1, Call: s.call})
}

// released records the answer to a release sent at call (tok: the lock's
// token, "" for a session's lock).
func (s *strategy) released(key, tok string, call time.Duration, err error, notHeld string) error {
	switch {
	case err != nil:
		s.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: err.Error(), Call: call})
		return err
	case notHeld != "":
		s.kit.Emit(lock.Step{Kind: lock.StepReleaseFailed, Key: key, Token: tok, Node: -1, Msg: notHeld, Call: call})
		return lock.ErrNotHeld
	}
	s.kit.Emit(lock.Step{Kind: lock.StepRelease, Key: key, Token: tok, Node: -1, OK: true, Call: call})
	return nil
}

// lockNotAvailable is SQLSTATE 55P03: FOR UPDATE NOWAIT found the row locked.
const lockNotAvailable = "55P03"

func isLockNotAvailable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == lockNotAvailable
}

// cells keeps values in the stock table.
type cells struct{ db *db }

func (c cells) Put(ctx context.Context, key string, v int64) error {
	_, err := c.db.Pool.Exec(ctx, `INSERT INTO `+c.db.stock+` (k, v) VALUES ($1, $2)
ON CONFLICT (k) DO UPDATE SET v = excluded.v, version = 0`, key, v)
	return err
}

func (c cells) Get(ctx context.Context, key string) (int64, error) {
	var v int64
	err := c.db.Pool.QueryRow(ctx, `SELECT v FROM `+c.db.stock+` WHERE k = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("lock/pg: no value at %s", key)
	}
	return v, err
}
