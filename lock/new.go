package lock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/locklab/locklab/lock/trait"
)

// Strategies lists every strategy with a one-line explanation, in order.
var Strategies = []struct {
	Name, Doc string
}{
	{"none", "no lock at all: the baseline race"},
	{"naive", "SETNX then EXPIRE, DEL to release: a crash gap and no ownership"},
	{"safe", "SET key token NX PX ttl, Lua compare-and-delete release"},
	{"fenced", "safe + a fencing token from INCR, taken only on success"},
	{"watchdog", "safe + renewal every ttl/3; a failed renewal cancels the holder"},
	{"fenced-watchdog", "watchdog renewals + a fencing token"},
	{"redlock", "quorum of N independent nodes, validity = ttl − elapsed − drift"},
}

// One Redis node, or Redlock's quorum of them (at least 3, whose majority
// survives one node's loss; 5 unless told).
var (
	oneNode = trait.Nodes{Min: 1, Default: 1}
	quorum  = trait.Nodes{Min: 3, Default: 5}
)

// redisTraits are what the Redis strategies' locks are.
var redisTraits = map[string]trait.Traits{
	"none": {Server: ServerRedis, Expiry: trait.ExpiryNone, Token: trait.TokenNone, Renewal: trait.RenewalNone, Nodes: oneNode},
	"naive": {Server: ServerRedis, Expiry: trait.ExpiryTTL, ExpiryApart: true, Token: trait.TokenRandom,
		Renewal: trait.RenewalNone, Unit: 1, Nodes: oneNode, Excludes: true, ReleaseAny: true},
	"safe": {Server: ServerRedis, Expiry: trait.ExpiryTTL, Token: trait.TokenRandom, Renewal: trait.RenewalNone,
		Unit: 1, Nodes: oneNode, Excludes: true},
	"fenced": {Server: ServerRedis, Expiry: trait.ExpiryTTL, Token: trait.TokenFence, Renewal: trait.RenewalNone,
		Unit: 1, Nodes: oneNode, Excludes: true},
	"watchdog": {Server: ServerRedis, Expiry: trait.ExpiryTTL, Token: trait.TokenRandom, Renewal: trait.RenewalWatchdog,
		Unit: 1, Nodes: oneNode, Excludes: true},
	"fenced-watchdog": {Server: ServerRedis, Expiry: trait.ExpiryTTL, Token: trait.TokenFence, Renewal: trait.RenewalWatchdog,
		Unit: 1, Nodes: oneNode, Excludes: true},
	"redlock": {Server: ServerRedis, Expiry: trait.ExpiryTTL, Token: trait.TokenRandom, Renewal: trait.RenewalNone,
		Unit: 1, Nodes: quorum, Excludes: true},
}

// The built-in strategies beyond the Redis locks above: one machine's
// (flock, semaphore) and Redis's optimistic transactions. The strategies
// that bring a client library register in lock/all.
func init() {
	Register(Info{Name: "flock", Doc: "flock(2) on a file per key in the run's temp dir: one machine only, no TTL",
		Traits: trait.Traits{Server: ServerFile, Expiry: trait.ExpirySession, Token: trait.TokenNone, Renewal: trait.RenewalNone,
			Nodes: oneNode, OneMachine: true, Excludes: true}},
		func(s Servers, o Options) (Locker, error) { return NewFlock(s.Dir, o), nil })
	Register(Info{Name: "semaphore", Doc: "a System V semaphore per key (one semop: wait for 0, add 1): one machine only",
		Traits: trait.Traits{Server: ServerIPC, Expiry: trait.ExpiryProcess, Token: trait.TokenNone, Renewal: trait.RenewalNone,
			Nodes: oneNode, OneMachine: true, Excludes: true}},
		func(s Servers, o Options) (Locker, error) { return NewSemaphore(s.Dir, s.Cleanup, o), nil })
	Register(Info{Name: "redis-optimistic", Doc: "no lock: WATCH the stock, read it; MULTI/EXEC fails if anyone wrote since",
		Traits: trait.Traits{Server: ServerRedis, Expiry: trait.ExpiryNone, Token: trait.TokenNone, Renewal: trait.RenewalNone,
			Nodes: oneNode, Cell: true, Optimistic: true}},
		func(s Servers, o Options) (Locker, error) {
			if len(s.Redis) == 0 {
				return nil, errors.New("lock: redis-optimistic needs a Redis client")
			}
			c, ok := s.Redis[0].(Conner)
			if !ok {
				return nil, fmt.Errorf("lock: redis-optimistic needs a client with connections of its own (got %T)", s.Redis[0])
			}
			return NewRedisOptimistic(c, o), nil
		})
}

// StrategyNames lists the strategies, comma-separated.
func StrategyNames() string {
	names := make([]string, len(Strategies))
	for i, s := range Strategies {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// New returns the named strategy. Single-node strategies use nodes[0];
// Redlock uses them all. crash is the naive strategy's crash point (may be
// nil).
func New(strategy string, nodes []Client, o Options, crash func(key string) bool) (Locker, error) {
	if len(nodes) == 0 && strategy != "none" {
		return nil, fmt.Errorf("lock: strategy %q needs a Redis client", strategy)
	}
	switch strategy {
	case "none":
		return NewNone(o), nil
	case "naive":
		return NewNaive(nodes[0], o, crash), nil
	case "safe":
		return NewSafe(nodes[0], o), nil
	case "fenced":
		return NewFenced(nodes[0], o), nil
	case "watchdog":
		return NewWatchdog(nodes[0], o), nil
	case "fenced-watchdog":
		return NewFencedWatchdog(nodes[0], o), nil
	case "redlock":
		return NewRedlock(nodes, o), nil
	}
	return nil, fmt.Errorf("unknown lock strategy %q: want one of %s", strategy, StrategyNames())
}

// Clients converts a slice of concrete clients (such as []*redis.Client)
// into the Client interface, for New and NewRedlock.
func Clients[C Client](cs []C) []Client {
	out := make([]Client, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}
