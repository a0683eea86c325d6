package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/lock/trait"
)

// Server names the kind of server a strategy runs on.
type Server = trait.Server

// The servers strategies run on. Redis, File and IPC need no setup: the
// run's Redis (embedded by default), its temp directory, this machine's
// kernel. The others are servers the user names (or, for etcd, embedded).
const (
	ServerRedis     Server = "redis"
	ServerFile      Server = "file"
	ServerIPC       Server = "ipc"
	ServerPostgres  Server = "postgres"
	ServerMySQL     Server = "mysql"
	ServerMemcached Server = "memcached"
	ServerEtcd      Server = "etcd"
)

// Info describes a strategy: its name, a line about it, and what its lock
// is (its traits: the server, the expiry, the token, the renewal…). With
// Cell, its leases carry a Cell and a caller keeps its counter there; with
// Optimistic, its leases exclude nobody and a conflicting write is refused
// (Cell.Store returns false).
type Info struct {
	Name, Doc string
	trait.Traits
}

// Servers are the connections a run offers to the strategies.
type Servers struct {
	// Redis are the run's Redis nodes (the first for single-node strategies).
	Redis []Client
	// Dir is a directory of the run's own (flock's lock files).
	Dir func() (string, error)
	// Conn returns the run's connection to a server of the kind: what the
	// strategy's package expects (a *pgxpool.Pool, a *sql.DB, …), or an
	// error saying how to configure it.
	Conn func(kind Server) (any, error)
	// Cleanup, if set, is given what to undo when the run ends (a
	// semaphore to remove).
	Cleanup func(func())
}

// Factory builds a strategy's Locker on a run's servers.
type Factory func(s Servers, o Options) (Locker, error)

var registry struct {
	mu    sync.RWMutex
	infos []Info
	by    map[string]Factory
}

// Register adds a strategy. Packages that bring a client library (lock/pg,
// lock/etcd, …) register theirs when imported. A name may be registered once.
func Register(info Info, f Factory) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.by == nil {
		registry.by = map[string]Factory{}
	}
	if _, dup := registry.by[info.Name]; dup || slices.ContainsFunc(Strategies, func(s struct{ Name, Doc string }) bool { return s.Name == info.Name }) {
		panic("lock: strategy " + info.Name + " registered twice")
	}
	registry.infos = append(registry.infos, info)
	registry.by[info.Name] = f
}

// All lists every strategy: the Redis ones, then the registered ones in
// the order they were registered.
func All() []Info {
	var out []Info
	for _, s := range Strategies {
		out = append(out, Info{Name: s.Name, Doc: s.Doc, Traits: redisTraits[s.Name]})
	}
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	reg := slices.Clone(registry.infos)
	slices.SortStableFunc(reg, func(a, b Info) int { return serverRank(a.Server) - serverRank(b.Server) })
	return append(out, reg...)
}

// serverRank orders the registered strategies: no setup first, then the
// servers one names.
func serverRank(s Server) int {
	return slices.Index([]Server{ServerFile, ServerIPC, ServerRedis, ServerPostgres, ServerMySQL, ServerMemcached, ServerEtcd}, s)
}

// Lookup finds a strategy's description.
// It is called at every worker's start, so it finds without listing.
func Lookup(name string) (Info, bool) {
	for _, s := range Strategies {
		if s.Name == name {
			return Info{Name: s.Name, Doc: s.Doc, Traits: redisTraits[s.Name]}, true
		}
	}
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	for _, s := range registry.infos {
		if s.Name == name {
			return s, true
		}
	}
	return Info{}, false
}

// WallClock says why a strategy keeps real time (its traits say its code
// reads the wall clock), or "" if it does not.
func WallClock(strategy string) string {
	if info, ok := Lookup(strategy); ok && info.Traits.WallClock {
		return strategy + " reads the wall clock (its deadlines and validity), which a simulation cannot move"
	}
	return ""
}

// AllNames lists every strategy, comma-separated.
func AllNames() string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// NewOn returns the named strategy on the run's servers: a Redis one as New
// does, or a registered one through its Factory.
func NewOn(strategy string, s Servers, o Options, crash func(key string) bool) (Locker, error) {
	registry.mu.RLock()
	f, ok := registry.by[strategy]
	registry.mu.RUnlock()
	if !ok {
		if _, known := Lookup(strategy); !known {
			return nil, fmt.Errorf("unknown lock strategy %q: want one of %s", strategy, AllNames())
		}
		return New(strategy, s.Redis, o, crash)
	}
	return f(s, o)
}

// Cell is the protected value itself, kept by a strategy that owns it.
type Cell interface {
	// Load reads the value.
	Load(ctx context.Context) (int64, error)
	// Store writes it; false (and no error) means an optimistic write found
	// the value changed since it was loaded, and wrote nothing.
	Store(ctx context.Context, v int64) (bool, error)
}

// Cells is the store of a strategy that keeps the protected values: a
// caller puts a value there before the workers start and reads it after.
type Cells interface {
	Put(ctx context.Context, key string, v int64) error
	Get(ctx context.Context, key string) (int64, error)
}

// CellKeeper is a Locker whose protected values live on its own server
// (pg-row's stock row): a caller puts them there before the run.
type CellKeeper interface {
	Cells() Cells
}

// Kit is what a strategy written outside this package shares with the
// ones inside: the clock, the observer, the retry loop, the tokens.
type Kit struct{ b base }

// NewKit returns the kit of a strategy configured by o.
func NewKit(o Options) *Kit { return &Kit{newBase(o)} }

// Emit reports a step to the observer.
func (k *Kit) Emit(s Step) { k.b.emit(s) }

// Token returns 16 random bytes, hex-encoded.
func (k *Kit) Token() (string, error) { return k.b.token() }

// Real is how long a virtual duration lasts on a server that keeps its
// own time (Postgres, memcached, etcd): at the clock's current speed, or
// scaled by --slowmo on real servers.
func (k *Kit) Real(d time.Duration) time.Duration { return k.b.clock.Real(d) }

// ToServer is a virtual duration as a Redis server counts it: the same on
// the embedded store (its time is the run's), scaled by --slowmo on a
// real server. A TTL a library sends to Redis goes through it.
func (k *Kit) ToServer(d time.Duration) time.Duration { return k.b.clock.ToServer(d) }

// Virtual is how much of the run's time a duration of real time on a
// server takes at the clock's current speed: the inverse of Real, for a
// TTL a server counts in its own units.
func (k *Kit) Virtual(d time.Duration) time.Duration {
	if s := k.b.clock.Speed(); s > 0 {
		return time.Duration(float64(d) * s)
	}
	return d
}

// Now is the run's time: when a command is sent, for its answer's Call.
func (k *Kit) Now() time.Duration { return k.b.clock.Now() }

// Sleep waits d of the run's time.
func (k *Kit) Sleep(ctx context.Context, d time.Duration) error { return k.b.clock.Sleep(ctx, d) }

// Try is one attempt, told its attempt number.
type Try func(ctx context.Context, key string, ttl time.Duration, attempt int) (*Lease, error)

// Acquire runs try, then retries per the retry policy while it returns
// ErrNotObtained, emitting the backoffs.
func (k *Kit) Acquire(ctx context.Context, key string, ttl time.Duration, try Try) (*Lease, error) {
	return k.b.acquire(ctx, key, ttl, tryFunc(try))
}

// LeaseFuncs are what a lease does on release, and on abandon (its holder
// died: whatever keeps the lock alive stops, and a lock tied to a
// connection is freed with it).
type LeaseFuncs struct {
	Release func(ctx context.Context) error
	Extend  func(ctx context.Context) error // the library's own extend, if it has one (Lease.Extend)
	Abandon func()
	// Losable gives the lease a context of its own, cancelled on release
	// and when Kit.Lose says the lock was lost (a lease that lapsed).
	Losable bool
}

// NewLease returns a held lock.
func NewLease(ctx context.Context, key, token string, ttl time.Duration, attempt int, f LeaseFuncs) *Lease {
	l := newLease(ctx, key, token, ttl, attempt)
	l.release, l.extend, l.abandon = f.Release, f.Extend, f.Abandon
	if f.Losable {
		l.cancellable(realClock)
	}
	return l
}

// Lose records that l's lock is lost, why in words, and cancels l's
// context with cause ErrLockLost (l must be Losable).
func (k *Kit) Lose(l *Lease, why string) {
	k.b.emit(Step{Kind: StepLockLost, Key: l.Key, Token: l.Token, Fence: l.Fence, Node: -1, Msg: why})
	l.cancel(errors.Join(ErrLockLost, errors.New(why)))
}

// Hold waits while the holder is paused (Options.Hold), before a renewal.
func (k *Kit) Hold(ctx context.Context) error {
	if k.b.hold == nil {
		return nil
	}
	return k.b.hold(ctx)
}
