// Package store owns locklab's connections to its servers: Redis — an
// embedded set of in-process miniredis nodes (the default, simulated or in
// real time) or real servers given by URL — and the servers beyond it
// (Postgres, MariaDB, memcached, etcd, embedded or by URL); the run's clock,
// the key namespace of a run, its owner's heartbeat and its cleanup, and
// the faults injected into the embedded nodes.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/store/spawn"
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
	// RunID, if set, is the run's id instead of a fresh one: processes that
	// take part in one race (a host and its guests) share its keys. Letters,
	// digits and '-' only.
	RunID string
	// Origin, if set, is the instant a real server's run clock reads zero
	// (a shared race's start), instead of the moment of opening.
	Origin time.Time
	// Topology, if set, is the servers to spawn for the run (single,
	// replica, sentinel, redlock): real processes on loopback, stopped at
	// Close. URLs must be empty; ReplicaLag is how far replicas trail.
	Topology string
	// WallTime makes the embedded nodes' time this machine's wall clock
	// (moved by any skew injected), instead of a fixed instant moved by
	// the run's clock: for a lock that sends absolute deadlines read from
	// the wall clock (rueidislock's PXAT), which a server reading another
	// time would keep a year long. The nodes then count real time, as a
	// real server does, whatever the run's speed.
	WallTime bool
	// Guest says the run's keys belong to another process (the race's
	// host): Close deletes only the guest's own registration. What it
	// writes is netted all the same, so a race whose host died leaves no
	// key without a TTL.
	Guest bool
}

// Store is the world of one run: its nodes, its clock and its key namespace.
// Open one per run and Close it when the run ends.
type Store struct {
	kind  Kind
	guest bool // the keys are another process's: never netted, never deleted here
	clock *Clock
	nodes []*Node
	runID string
	// poolSize is the connections its workers may hold at once, as the
	// servers beyond Redis are told.
	poolSize int
	prefix   string
	owner    Owner // the run's registration on real servers
	extra    extras
	topo     *spawn.Topology // the servers the run spawned, if any

	netFaults *netTable // the network faults in force

	life     sync.Mutex // Close and abort
	closed   bool
	aborted  bool
	closeErr error
	cleanErr error
	deleted  int
}

// Open connects to the servers in cfg, or starts the embedded ones.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	id, err := newRunID()
	if err != nil {
		return nil, err
	}
	if cfg.RunID != "" {
		if !validRunID(cfg.RunID) {
			return nil, fmt.Errorf("store: run id %q: want letters, digits and '-'", cfg.RunID)
		}
		id = cfg.RunID
	}
	s := &Store{runID: id, prefix: "locklab:" + id + ":", guest: cfg.Guest, netFaults: newNetTable()}
	if s.owner, err = newOwner(id, cfg.Guest); err != nil {
		return nil, err
	}
	switch {
	case cfg.Topology != "" && len(cfg.URLs) > 0:
		err = errors.New("store: a spawned topology and Redis URLs exclude each other")
	case cfg.Topology != "":
		if s.topo, err = spawn.Start(ctx, cfg.Topology, cfg.ReplicaLag); err == nil {
			cfg.URLs = s.topo.URLs()
			err = s.openReal(ctx, cfg)
		}
	case len(cfg.URLs) == 0:
		err = s.openEmbedded(cfg)
	default:
		err = s.openReal(ctx, cfg)
	}
	if err == nil {
		err = s.openServers(ctx, cfg.Servers, cfg.PoolSize)
	}
	for _, n := range s.nodes {
		n.links = s.netFaults
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

func validRunID(id string) bool {
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return len(id) > 0 && len(id) <= 64
}

// Kind is Embedded or Real.
func (s *Store) Kind() Kind { return s.kind }

// Clock is the run's clock.
func (s *Store) Clock() *Clock { return s.clock }

// Nodes are the run's Redis nodes; a single-node store has one.
func (s *Store) Nodes() []*Node { return s.nodes }

// Client is the first node's client, the one non-Redlock strategies use.
func (s *Store) Client() Redis { return s.nodes[0].Client }

// Clients are every node's client, in node order.
func (s *Store) Clients() []Redis {
	cs := make([]Redis, len(s.nodes))
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
	if s.topo != nil {
		return s.topo.Describe() + s.describeServers()
	}
	addrs := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		addrs[i] = n.Addr
	}
	return "redis " + strings.Join(addrs, ",") + s.describeServers()
}

// Cleanup deletes every key of the run on every reachable node, and nothing
// else, all nodes at once. It returns how many keys it really deleted and,
// for the nodes where it could not, a *LeftError saying how to remove them.
// It is safe to call more than once.
func (s *Store) Cleanup(ctx context.Context) (int, error) { return s.cleanup(ctx, false) }

// cleanup is Cleanup, on fresh connections when fresh.
func (s *Store) cleanup(ctx context.Context, fresh bool) (int, error) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		deleted int
		left    []NodeLeft
	)
	for _, n := range s.nodes {
		if n.Client == nil || (n.embedded && n.Down()) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := n.Client
			if fresh {
				// The pool's connections may be stuck on a frozen server.
				c = redis.NewClient(concrete(n.Client).Options())
				defer c.Close()
			}
			d, err := n.deleteRun(ctx, c, s.prefix, s.guest)
			mu.Lock()
			defer mu.Unlock()
			deleted += d
			if err != nil {
				left = append(left, NodeLeft{Addr: n.Addr, Err: scrubbed{err, n.url}, url: n.url, embedded: n.embedded})
			}
		}()
	}
	wg.Wait()
	if len(left) > 0 {
		return deleted, &LeftError{Nodes: left, Prefix: s.prefix}
	}
	return deleted, nil
}

// deleteRun deletes the keys the run is known to have made on n, then any
// other key under prefix (SCAN), and reports how many it deleted. A guest
// deletes only its own registration: the keys are the host's.
func (n *Node) deleteRun(ctx context.Context, c Redis, prefix string, guest bool) (int, error) {
	deleted := 0
	if guest {
		if n.net == nil {
			return 0, nil
		}
		d, err := c.Del(ctx, n.net.marker, n.net.record).Result()
		return int(d), err
	}
	if n.net != nil {
		if keys := append(n.net.known(), n.net.marker, n.net.record); len(keys) > 0 {
			d, err := c.Del(ctx, keys...).Result()
			deleted += int(d)
			if err != nil {
				return deleted, err
			}
		}
	}
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, prefix+"*", 500).Result()
		if err != nil {
			return deleted, err
		}
		if len(keys) > 0 {
			d, err := c.Del(ctx, keys...).Result()
			deleted += int(d)
			if err != nil {
				return deleted, err
			}
		}
		if next == 0 {
			return deleted, nil
		}
		cursor = next
	}
}

// scrubbed is an error whose message holds no password of url.
type scrubbed struct {
	err error
	url string
}

func (e scrubbed) Error() string { return Scrub(e.err.Error(), e.url) }

func (e scrubbed) Unwrap() error { return e.err }

// NodeLeft is a node where a run's keys could not be deleted.
type NodeLeft struct {
	Addr     string
	Err      error
	url      string
	embedded bool // an embedded node: its keys go with it when the store closes
}

// LeftError says which nodes kept a run's keys and how to remove them.
type LeftError struct {
	Nodes  []NodeLeft
	Prefix string
}

func (e *LeftError) Error() string {
	var where, how []string
	for _, n := range e.Nodes {
		why := n.Err.Error()
		if isTimeout(n.Err) || errors.Is(n.Err, context.DeadlineExceeded) {
			why = fmt.Sprintf("no answer within %v", cleanupWait)
		}
		where = append(where, fmt.Sprintf("%s (%s)", n.Addr, why))
		how = append(how, "locklab clean --redis '"+Redact(n.url)+"'")
	}
	return fmt.Sprintf("could not delete the run's keys %s* on %s; those that remain vanish by themselves within %v (their TTL), or remove them now: %s",
		e.Prefix, strings.Join(where, ", "), NetTTL, strings.Join(how, "; "))
}

// onlyLasting is err without the embedded nodes that kept keys: they stop
// as the store closes, and their keys with them (a busy machine may keep
// one from answering the cleanup in time; nothing is left behind).
func onlyLasting(err error) error {
	var left *LeftError
	if !errors.As(err, &left) {
		return err
	}
	kept := slices.DeleteFunc(slices.Clone(left.Nodes), func(n NodeLeft) bool { return n.embedded })
	if len(kept) == 0 {
		return nil
	}
	return &LeftError{Nodes: kept, Prefix: left.Prefix}
}

// cleanupWait bounds the cleanup in Close, so an interrupted run ends in
// time even when a server does not answer.
const cleanupWait = time.Second

// Close stops the heartbeat, deletes the run's keys (bounded by a short
// timeout), closes every client and stops the embedded nodes. Its error is
// a *LeftError when keys were left; Deleted says how many were deleted.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return s.closeErr
	}
	s.closed = true
	var errs []error
	if s.aborted {
		errs = append(errs, s.cleanErr)
	} else {
		s.stopNets()
		ctx, cancel := context.WithTimeout(context.Background(), cleanupWait)
		defer cancel()
		if s.clock != nil {
			d, err := s.Cleanup(ctx)
			s.deleted = d
			errs = append(errs, onlyLasting(err))
		}
	}
	sctx, scancel := context.WithTimeout(context.Background(), cleanupWait)
	defer scancel()
	errs = append(errs, s.closeServers(sctx))
	for _, n := range s.nodes {
		if err := n.close(); !s.aborted {
			errs = append(errs, err)
		}
	}
	if s.topo != nil {
		s.topo.Stop()
	}
	s.closeErr = errors.Join(errs...)
	return s.closeErr
}

func (s *Store) stopNets() {
	for _, n := range s.nodes {
		if n.net != nil {
			n.net.close()
		}
	}
}

// AbortOn gives up a real server as soon as ctx is done (Ctrl-C): it
// deletes the run's keys, bounded and on fresh connections, then closes
// the clients, so that workers blocked on a server that does not answer
// (frozen, unreachable) return at once instead of after their read
// timeout. Close then reports what the abort deleted or left. stop ends
// the watch.
func (s *Store) AbortOn(ctx context.Context) (stop func() bool) {
	if s.kind != Real {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, s.abort)
}

// Abort gives up a real server now, as AbortOn does when its context ends:
// the run's keys are deleted (bounded) and the clients closed, so workers
// blocked on a server that does not answer return at once. Close then
// reports what was deleted or left. Nothing to do on the embedded store.
func (s *Store) Abort() {
	if s.kind == Real {
		s.abort()
	}
}

func (s *Store) abort() {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed || s.aborted {
		return
	}
	s.aborted = true
	s.stopNets()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupWait)
	defer cancel()
	s.deleted, s.cleanErr = s.cleanup(ctx, true)
	for _, n := range s.nodes {
		_ = n.Client.Close()
	}
}

// Deleted is how many keys of the run Close deleted.
func (s *Store) Deleted() int { return s.deleted }
