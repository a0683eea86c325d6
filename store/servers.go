package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Servers names the servers beyond Redis that a run may use. Empty fields
// are servers the run does not have.
type Servers struct {
	Postgres  string // postgres://user:password@host:port/db
	MySQL     string // mysql://user:password@host:port/db
	Memcached string // host:port (or memcached://host:port)
	// Etcd is a user's etcd, http://host:port[,http://host:port…]; when
	// empty, the run embeds its own members on first use.
	Etcd string
	// EtcdMembers is how many members an embedded etcd has: 1 unless set.
	EtcdMembers int
}

// ServerEnv are the environment variables that name the servers when no
// flag does.
var ServerEnv = Servers{Postgres: "LOCKLAB_POSTGRES_URL", MySQL: "LOCKLAB_MYSQL_URL", Memcached: "LOCKLAB_MEMCACHED_URL", Etcd: "LOCKLAB_ETCD_URL"}

// FromEnv fills the empty fields of s from the environment.
func (s Servers) FromEnv() Servers {
	fill := func(v *string, env string) {
		if *v == "" {
			*v = os.Getenv(env)
		}
	}
	fill(&s.Postgres, ServerEnv.Postgres)
	fill(&s.MySQL, ServerEnv.MySQL)
	fill(&s.Memcached, ServerEnv.Memcached)
	fill(&s.Etcd, ServerEnv.Etcd)
	return s
}

// Server kinds, as the lock strategies name them.
const (
	ServerPostgres  = "postgres"
	ServerMySQL     = "mysql"
	ServerMemcached = "memcached"
	ServerEtcd      = "etcd"
)

// Has reports whether a server of the kind is configured. Kinds that need
// nothing configured (the run's Redis, its directory, this machine's
// semaphores, embedded etcd) are always there.
func (s Servers) Has(kind string) bool {
	switch kind {
	case ServerPostgres:
		return s.Postgres != ""
	case ServerMySQL:
		return s.MySQL != ""
	case ServerMemcached:
		return s.Memcached != ""
	case ServerEtcd: // or members of its own, when this program embeds etcd
		return s.Etcd != "" || startEmbedded != nil
	}
	return true
}

// Needs says what to pass for a server of the kind: "--postgres URL or
// LOCKLAB_POSTGRES_URL"; "" for kinds that need nothing.
func Needs(kind string) string {
	switch kind {
	case ServerPostgres:
		return "--postgres URL or " + ServerEnv.Postgres
	case ServerMySQL:
		return "--mysql URL or " + ServerEnv.MySQL
	case ServerMemcached:
		return "--memcached ADDR or " + ServerEnv.Memcached
	case ServerEtcd:
		return "--etcd URL or " + ServerEnv.Etcd
	}
	return ""
}

// NotConfiguredError says a strategy's server was not given.
type NotConfiguredError struct{ Kind string }

func (e *NotConfiguredError) Error() string {
	return fmt.Sprintf("no %s server: pass %s", e.Kind, Needs(e.Kind))
}

// Conn is a run's connection to a server beyond Redis, as its driver
// opened it.
type Conn interface {
	// Close undoes what the run made on the server (and only that), then
	// closes the connection.
	Close(ctx context.Context) error
}

// Run is what a driver is told about the run it connects for.
type Run struct {
	ID       string // the run's id
	Owner    Owner  // its owner record, for locklab clean
	PoolSize int    // connections its workers may hold at once
	Embedded bool   // the server is the run's own (embedded etcd)
}

// Driver opens a run's connection to a server of one kind at raw (the
// URL or address the user gave).
type Driver func(ctx context.Context, raw string, r Run) (Conn, error)

var drivers = map[string]Driver{}

// RegisterDriver makes kind's servers usable by the stores opened after
// it; the lock strategies that run on them register it (lock/all), so a
// program that needs only Redis does not pay for their clients.
func RegisterDriver(kind string, d Driver) { drivers[kind] = d }

// extras are the run's resources beyond Redis: its directory, its
// connections to other servers, and what to undo at the end.
type extras struct {
	mu    sync.Mutex
	cfg   Servers
	dir   string
	conns map[string]Conn // by kind
	// cluster is the run's embedded etcd, stopped after its connection.
	cluster     EtcdCluster
	stopCluster func(EtcdCluster) error
	undo        []func()
}

// open connects to the server of the kind at raw through its driver.
func (s *Store) open(ctx context.Context, kind, raw string, embedded bool) (Conn, error) {
	d, ok := drivers[kind]
	if !ok {
		return nil, fmt.Errorf("store: this program has no %s driver", kind)
	}
	c, err := d(ctx, raw, Run{ID: s.runID, Owner: s.owner, PoolSize: s.poolSize, Embedded: embedded})
	if err != nil {
		return nil, err
	}
	if s.extra.conns == nil {
		s.extra.conns = map[string]Conn{}
	}
	s.extra.conns[kind] = c
	return c, nil
}

// openServers connects to every configured server.
func (s *Store) openServers(ctx context.Context, cfg Servers, poolSize int) error {
	s.extra.cfg = cfg
	s.poolSize = poolSize
	for _, k := range []struct{ kind, raw string }{{ServerPostgres, cfg.Postgres}, {ServerMySQL, cfg.MySQL},
		{ServerMemcached, cfg.Memcached}, {ServerEtcd, cfg.Etcd}} {
		if k.raw == "" {
			continue
		}
		if _, err := s.open(ctx, k.kind, k.raw, false); err != nil {
			return err
		}
	}
	return nil
}

// Servers are the servers beyond Redis the run was opened with.
func (s *Store) Servers() Servers { return s.extra.cfg }

// Dir is a directory of the run's own, made on first use and removed with
// everything in it when the store closes.
func (s *Store) Dir() (string, error) {
	s.extra.mu.Lock()
	defer s.extra.mu.Unlock()
	if s.extra.dir == "" {
		d, err := os.MkdirTemp("", "locklab-"+s.runID+"-")
		if err != nil {
			return "", fmt.Errorf("store: run directory: %w", err)
		}
		s.extra.dir = d
	}
	return s.extra.dir, nil
}

// AtClose adds f to what the store undoes when it closes (last added, first
// run).
func (s *Store) AtClose(f func()) {
	s.extra.mu.Lock()
	s.extra.undo = append(s.extra.undo, f)
	s.extra.mu.Unlock()
}

// Server is the run's connection to a server of the kind, as its driver
// opened it (the lock strategies on it know its type); a
// *NotConfiguredError when it was not given. Without a user's etcd, the
// first call for one starts the run's embedded members.
func (s *Store) Server(kind string) (any, error) {
	switch kind {
	case ServerEtcd:
		return s.etcd()
	case ServerPostgres, ServerMySQL, ServerMemcached:
	default:
		return nil, fmt.Errorf("store: no server of kind %q", kind)
	}
	s.extra.mu.Lock()
	c := s.extra.conns[kind]
	s.extra.mu.Unlock()
	if c == nil {
		return nil, &NotConfiguredError{kind}
	}
	return c, nil
}

// closeServers undoes what the run did beyond Redis: its undo list, the
// namespaces it made on other servers, its directory.
func (s *Store) closeServers(ctx context.Context) error {
	s.extra.mu.Lock()
	undo := s.extra.undo
	s.extra.undo = nil
	dir := s.extra.dir
	s.extra.dir = ""
	s.extra.mu.Unlock()
	for i := len(undo) - 1; i >= 0; i-- {
		undo[i]()
	}
	var errs []error
	s.extra.mu.Lock()
	conns := s.extra.conns
	s.extra.conns = nil
	cluster, stop := s.extra.cluster, s.extra.stopCluster
	s.extra.cluster = nil
	s.extra.mu.Unlock()
	for _, kind := range []string{ServerPostgres, ServerMySQL, ServerMemcached, ServerEtcd} {
		if c := conns[kind]; c != nil {
			errs = append(errs, c.Close(ctx))
		}
	}
	if cluster != nil {
		errs = append(errs, stop(cluster)) // its data goes with it
	}
	if dir != "" {
		errs = append(errs, os.RemoveAll(dir))
	}
	return errors.Join(errs...)
}

// describeServers is " + postgres host:port/db" for each server beyond
// Redis the run is connected to; never a password.
func (s *Store) describeServers() string {
	out := ""
	s.extra.mu.Lock()
	defer s.extra.mu.Unlock()
	for _, kind := range []string{ServerPostgres, ServerMySQL, ServerMemcached, ServerEtcd} {
		c := s.extra.conns[kind]
		switch {
		case c == nil:
		case kind == ServerEtcd && s.extra.cluster != nil:
			out += fmt.Sprintf(" + embedded etcd ×%d", s.extra.cluster.Members())
		default:
			out += " + " + kind + " " + addrOf(c)
		}
	}
	return out
}

// addrOf is a connection's address as its driver shows it (its Addr
// field: host:port/db, never a password).
func addrOf(c Conn) string {
	if a, ok := c.(interface{ Address() string }); ok {
		return a.Address()
	}
	return "?"
}

// etcd is the run's etcd: the user's, or else members embedded for the
// run (Servers.EtcdMembers of them), started on the first call and stopped
// with the store. A single member is shared by the stores of this process
// that are open at once (each run keeps to its own prefix) and stopped with
// the last of them; three or five are the run's own, to stop one of.
func (s *Store) etcd() (Conn, error) {
	s.extra.mu.Lock()
	defer s.extra.mu.Unlock()
	if c := s.extra.conns[ServerEtcd]; c != nil {
		return c, nil
	}
	if startEmbedded == nil {
		return nil, &NotConfiguredError{Kind: ServerEtcd}
	}
	if _, ok := drivers[ServerEtcd]; !ok {
		return nil, fmt.Errorf("store: this program has no %s driver", ServerEtcd)
	}
	n := max(s.extra.cfg.EtcdMembers, 1)
	start, stop := StartEtcd, EtcdCluster.Close
	if n == 1 {
		start, stop = useSharedEtcd, leaveSharedEtcd
	}
	c, err := start(n)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := s.open(ctx, ServerEtcd, c.URL(), true)
	if err != nil {
		stop(c)
		return nil, err
	}
	s.extra.cluster, s.extra.stopCluster = c, stop
	return e, nil
}

// EmbeddedEtcd is the run's embedded etcd cluster once started; nil on a
// user's etcd or before a strategy asked for etcd.
func (s *Store) EmbeddedEtcd() EtcdCluster {
	s.extra.mu.Lock()
	defer s.extra.mu.Unlock()
	return s.extra.cluster
}
