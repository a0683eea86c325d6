// Package store owns locklab's connections to Redis: an embedded set of
// in-process miniredis nodes (the default) or real servers given by URL, the
// run's clock, the key namespace of a run and its cleanup.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kind names where a run's data lives.
type Kind string

// The kinds of store.
const (
	Embedded Kind = "embedded"
	Real     Kind = "redis"
)

// Config selects and tunes a store.
type Config struct {
	// URLs of real Redis servers; empty selects the embedded store.
	URLs []string
	// Nodes is the number of embedded nodes (at least 1). Ignored with URLs.
	Nodes int
	// Speed is the embedded clock's initial speed (default 1).
	Speed float64
	// Paused starts the embedded clock paused.
	Paused bool
	// Slowmo scales every duration on a real server (default 1).
	Slowmo float64
	// ConnectTimeout bounds connecting to a real server (default 2s).
	ConnectTimeout time.Duration
	// PoolSize is the connection pool size per node (default: go-redis's).
	PoolSize int
	// Servers are the servers beyond Redis the run may use.
	Servers Servers
	// ReplicaLag, if set, gives every embedded node an asynchronous replica
	// trailing it by this much, so Failover can be injected at any time.
	ReplicaLag time.Duration
}

// Store is the world of one run: its nodes, its clock and its key namespace.
// Open one per run and Close it when the run ends.
type Store struct {
	kind   Kind
	clock  *Clock
	nodes  []*Node
	runID  string
	prefix string
	extra  extras
}

// Open connects to the servers in cfg, or starts the embedded ones.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	id, err := newRunID()
	if err != nil {
		return nil, err
	}
	s := &Store{runID: id, prefix: "locklab:" + id + ":"}
	if len(cfg.URLs) == 0 {
		err = s.openEmbedded(cfg)
	} else {
		err = s.openReal(ctx, cfg)
	}
	if err == nil {
		err = s.openServers(ctx, cfg.Servers, cfg.PoolSize)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func newRunID() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("store: run id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Kind is Embedded or Real.
func (s *Store) Kind() Kind { return s.kind }

// Clock is the run's clock.
func (s *Store) Clock() *Clock { return s.clock }

// Nodes are the run's Redis nodes; a single-node store has one.
func (s *Store) Nodes() []*Node { return s.nodes }

// Client is the first node's client, the one non-Redlock strategies use.
func (s *Store) Client() *redis.Client { return s.nodes[0].Client }

// Clients are every node's client, in node order.
func (s *Store) Clients() []*redis.Client {
	cs := make([]*redis.Client, len(s.nodes))
	for i, n := range s.nodes {
		cs[i] = n.Client
	}
	return cs
}

// RunID identifies the run; every key of the run carries it.
func (s *Store) RunID() string { return s.runID }

// Prefix is the namespace of the run's keys: "locklab:<run-id>:".
func (s *Store) Prefix() string { return s.prefix }

// Key returns the run's key for name.
func (s *Store) Key(name string) string { return s.prefix + name }

// Name returns the short name of one of the run's keys (Key's inverse).
func (s *Store) Name(key string) string { return strings.TrimPrefix(key, s.prefix) }

// Describe says where the data lives, for headers and summaries; it never
// contains a password.
func (s *Store) Describe() string {
	if s.kind == Embedded {
		if len(s.nodes) == 1 {
			return "embedded" + s.describeServers()
		}
		return fmt.Sprintf("embedded ×%d", len(s.nodes)) + s.describeServers()
	}
	addrs := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		addrs[i] = n.Addr
	}
	return "redis " + strings.Join(addrs, ",") + s.describeServers()
}

// Cleanup deletes every key of the run on every reachable node, and nothing
// else. It is safe to call more than once.
func (s *Store) Cleanup(ctx context.Context) error {
	var errs []error
	for _, n := range s.nodes {
		if n.Client == nil || (n.embedded && n.Down()) {
			continue
		}
		if err := deletePrefix(ctx, n.Client, s.prefix); err != nil {
			errs = append(errs, fmt.Errorf("store: cleanup on %s: %w", n.Addr, err))
		}
	}
	return errors.Join(errs...)
}

func deletePrefix(ctx context.Context, c *redis.Client, prefix string) error {
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, prefix+"*", 500).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// Close deletes the run's keys (bounded by a short timeout), closes every
// client and stops the embedded nodes.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var errs []error
	if s.clock != nil {
		errs = append(errs, s.Cleanup(ctx))
	}
	errs = append(errs, s.closeServers(ctx))
	for _, n := range s.nodes {
		errs = append(errs, n.close())
	}
	return errors.Join(errs...)
}
