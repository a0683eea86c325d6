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

// extras are the run's resources beyond Redis: its directory, its
// connections to other servers, and what to undo at the end.
type extras struct {
	mu        sync.Mutex
	cfg       Servers
	dir       string
	postgres  *Postgres
	mysql     *MySQL
	memcached *Memcached
	etcd      *Etcd
	undo      []func()
}

// openServers connects to every configured server.
func (s *Store) openServers(ctx context.Context, cfg Servers, poolSize int) error {
	s.extra.cfg = cfg
	var err error
	if cfg.Postgres != "" {
		if s.extra.postgres, err = openPostgres(ctx, cfg.Postgres, s.owner); err != nil {
			return err
		}
	}
	if cfg.MySQL != "" {
		if s.extra.mysql, err = openMySQL(ctx, cfg.MySQL, poolSize, s.owner); err != nil {
			return err
		}
	}
	if cfg.Memcached != "" {
		if s.extra.memcached, err = openMemcached(ctx, cfg.Memcached, poolSize, s.owner); err != nil {
			return err
		}
	}
	if cfg.Etcd != "" {
		if s.extra.etcd, err = openEtcd(ctx, cfg.Etcd, s.runID); err != nil {
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

// Server is the run's connection to a server of the kind: *Postgres,
// *MySQL, *Memcached or *Etcd; a *NotConfiguredError when it was not given.
// Without a user's etcd, the first call for one starts the run's embedded
// members.
func (s *Store) Server(kind string) (any, error) {
	var v any
	switch kind {
	case ServerEtcd:
		e, err := s.Etcd()
		if err != nil {
			return nil, err
		}
		v = e
	case ServerPostgres:
		if p := s.extra.postgres; p != nil {
			v = p
		}
	case ServerMySQL:
		if m := s.extra.mysql; m != nil {
			v = m
		}
	case ServerMemcached:
		if m := s.extra.memcached; m != nil {
			v = m
		}
	default:
		return nil, fmt.Errorf("store: no server of kind %q", kind)
	}
	if v == nil {
		return nil, &NotConfiguredError{kind}
	}
	return v, nil
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
	if p := s.extra.postgres; p != nil {
		errs = append(errs, p.close(ctx))
		s.extra.postgres = nil
	}
	if m := s.extra.mysql; m != nil {
		errs = append(errs, m.close(ctx))
		s.extra.mysql = nil
	}
	if m := s.extra.memcached; m != nil {
		errs = append(errs, m.close(ctx))
		s.extra.memcached = nil
	}
	s.extra.mu.Lock()
	e := s.extra.etcd
	s.extra.etcd = nil
	s.extra.mu.Unlock()
	if e != nil {
		errs = append(errs, e.close(ctx))
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
	if p := s.extra.postgres; p != nil {
		out += " + postgres " + p.Addr
	}
	if m := s.extra.mysql; m != nil {
		out += " + mysql " + m.Addr
	}
	if m := s.extra.memcached; m != nil {
		out += " + memcached " + m.Addr
	}
	s.extra.mu.Lock()
	defer s.extra.mu.Unlock()
	switch e := s.extra.etcd; {
	case e != nil && e.Cluster != nil:
		out += fmt.Sprintf(" + embedded etcd ×%d", e.Cluster.Members())
	case e != nil:
		out += " + etcd " + e.Addr
	}
	return out
}

// Etcd is the run's etcd: the user's, or else members embedded for the run
// (Servers.EtcdMembers of them), started on the first call and stopped with
// the store. A single member is shared by the stores of this process that
// are open at once (each run keeps to its own prefix) and stopped with the
// last of them; three or five are the run's own, to stop one of.
func (s *Store) Etcd() (*Etcd, error) {
	s.extra.mu.Lock()
	defer s.extra.mu.Unlock()
	if s.extra.etcd != nil {
		return s.extra.etcd, nil
	}
	if startEmbedded == nil {
		return nil, &NotConfiguredError{Kind: ServerEtcd}
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
	e, err := openEtcd(ctx, c.URL(), s.runID)
	if err != nil {
		stop(c)
		return nil, err
	}
	e.Cluster, e.stopCluster = c, stop
	s.extra.etcd = e
	return e, nil
}
