// Package memcached is a run's connection to a memcached server: the
// keys it adds, deleted when the run ends, and the meta-protocol client
// its lock uses.
package memcached

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/locklab/locklab/store"
)

// Conn is a run's connection to a memcached server. Every key the run
// adds there is remembered and deleted when the store closes (memcached
// cannot list keys by prefix).
type Conn struct {
	Client *memcache.Client
	// Meta is the lock's client: add and delete-if-CAS in a round trip each.
	Meta *Meta
	Addr string

	mu   sync.Mutex
	keys map[string]bool

	owner store.Owner
	beat  *store.Beat
}

// Created records a key the run added, for cleanup.
func (m *Conn) Created(key string) {
	m.mu.Lock()
	m.keys[key] = true
	m.mu.Unlock()
}

// Open connects to the memcached server at raw for the run r and writes
// the run's owner record there.
func Open(_ context.Context, raw string, r store.Run) (*Conn, error) {
	poolSize, o := r.PoolSize, r.Owner
	addr, err := Addr(raw)
	if err != nil {
		return nil, store.NewURLError(fmt.Sprintf("invalid memcached address %s: %v", store.RedactAs(raw, ""), err))
	}
	c := memcache.New(addr)
	c.Timeout = 2 * time.Second
	c.MaxIdleConns = min(max(poolSize, 10), 64)
	m := &Conn{Client: c, Meta: NewMeta(addr, c.Timeout, min(max(poolSize, 10), 512)), Addr: addr, keys: map[string]bool{}}
	err = c.Ping()
	if err == nil {
		err = m.Meta.Ping()
	}
	if err != nil {
		m.Meta.Close()
		se := &store.ServerError{Kind: "memcached", Addr: addr, Err: errors.New(store.FirstLine(err.Error())),
			Hint: "is the server running? Start one with `docker compose up -d memcached`"}
		c.Close()
		return nil, se
	}
	m.owner = o
	if err := m.register(); err != nil {
		m.Meta.Close()
		c.Close()
		return nil, &store.ServerError{Kind: "memcached", Addr: addr, Err: errors.New(store.FirstLine(err.Error()))}
	}
	m.beat = store.StartBeat(func(context.Context) error { return m.register() })
	return m, nil
}

// register writes the owner record (expiring store.OwnerTTL after the last
// beat) and the heartbeat (store.HeartbeatTTL).
func (m *Conn) register() error {
	prefix := "locklab:" + m.owner.NS + ":"
	rec := []byte(m.owner.String())
	if err := m.Client.Set(&memcache.Item{Key: prefix + store.OwnerName + ":" + m.owner.ID, Value: rec,
		Expiration: int32(store.OwnerTTL / time.Second)}); err != nil {
		return err
	}
	return m.Client.Set(&memcache.Item{Key: prefix + store.MarkerName + ":" + m.owner.ID, Value: rec,
		Expiration: int32(store.HeartbeatTTL / time.Second)})
}

// Close deletes every key the run added.
func (m *Conn) Close(context.Context) error {
	m.beat.Stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := "locklab:" + m.owner.NS + ":"
	m.keys[prefix+store.MarkerName+":"+m.owner.ID] = true
	m.keys[prefix+store.OwnerName+":"+m.owner.ID] = true
	var errs []error
	for k := range m.keys {
		if err := m.Client.Delete(k); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
			errs = append(errs, err)
		}
	}
	m.keys = map[string]bool{}
	m.Meta.Close()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: cleanup on memcached %s: %w", m.Addr, err)
	}
	return m.Client.Close()
}

// Addr is the host:port of a memcached address, typed bare or
// after memcached://. memcached takes no user, password, path or option:
// what is not host:port is refused, never read as one.
func Addr(raw string) (string, error) {
	addr := strings.TrimSpace(raw)
	if scheme, rest, ok := strings.Cut(addr, "://"); ok {
		if scheme != "memcached" {
			return "", fmt.Errorf("the scheme is %q; want memcached:// or none", scheme)
		}
		addr = rest
	}
	addr = strings.TrimSuffix(addr, "/")
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || strings.ContainsAny(host, "@/?#") {
		return "", errors.New("want host:port, such as localhost:11211")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", errors.New("the port must be a number from 1 to 65535")
	}
	return addr, nil
}

// Address is where the server is: host:port (and database), never a
// password.
func (x *Conn) Address() string { return x.Addr }

// Register makes stores opened from now on reach memcached servers through
// Open; the strategies on memcached call it when they register.
func Register() {
	store.RegisterDriver(store.ServerMemcached, func(ctx context.Context, raw string, r store.Run) (store.Conn, error) {
		c, err := Open(ctx, raw, r)
		if err != nil {
			return nil, err // not a nil *Conn in an interface
		}
		return c, nil
	})
}
