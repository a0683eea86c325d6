package lock

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptimistic takes no lock: a lease is a connection of its own that
// WATCHes the key and reads it; the write is a MULTI/EXEC that Redis
// refuses if anyone wrote the key since the WATCH. The protected value
// lives at the key itself (Lease.Cell).
type RedisOptimistic struct {
	base
	c Conner
}

// Conner is a Redis client that gives out connections of their own
// (*redis.Client does): WATCH belongs to a connection.
type Conner interface {
	Conn() *redis.Conn
}

var _ Locker = (*RedisOptimistic)(nil)

// NewRedisOptimistic returns the redis-optimistic strategy.
func NewRedisOptimistic(c Conner, o Options) *RedisOptimistic {
	return &RedisOptimistic{base: newBase(o), c: c}
}

// Strategy returns "redis-optimistic".
func (*RedisOptimistic) Strategy() string { return "redis-optimistic" }

// TryAcquire takes no lock; it gives a lease whose Cell reads under WATCH
// and writes with MULTI/EXEC.
func (r *RedisOptimistic) TryAcquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	conn := r.c.Conn()
	l := newLease(ctx, key, "", ttl, 1)
	l.Cell = &watchCell{conn: conn, key: key}
	l.release = func(ctx context.Context) error {
		return errors.Join(conn.Process(ctx, redis.NewStatusCmd(ctx, "unwatch")), conn.Close())
	}
	l.abandon = func() { conn.Close() }
	return l, nil
}

// Acquire is TryAcquire: there is nothing to wait for.
func (r *RedisOptimistic) Acquire(ctx context.Context, key string, ttl time.Duration) (*Lease, error) {
	return r.TryAcquire(ctx, key, ttl)
}

type watchCell struct {
	conn *redis.Conn
	key  string
}

func (w *watchCell) Load(ctx context.Context) (int64, error) {
	if err := w.conn.Process(ctx, redis.NewStatusCmd(ctx, "watch", w.key)); err != nil {
		return 0, err
	}
	return w.conn.Get(ctx, w.key).Int64()
}

func (w *watchCell) Store(ctx context.Context, v int64) (bool, error) {
	_, err := w.conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, w.key, v, 0)
		return nil
	})
	if errors.Is(err, redis.TxFailedErr) {
		return false, nil
	}
	return err == nil, err
}

// RedisCells keeps values at plain Redis keys.
type RedisCells struct{ C redis.StringCmdable }

// Put sets key to v.
func (r RedisCells) Put(ctx context.Context, key string, v int64) error {
	return r.C.Set(ctx, key, v, 0).Err()
}

// Get reads key.
func (r RedisCells) Get(ctx context.Context, key string) (int64, error) {
	return r.C.Get(ctx, key).Int64()
}
