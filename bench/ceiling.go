package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	etcdstore "github.com/locklab/locklab/store/etcd"
	mcstore "github.com/locklab/locklab/store/memcached"
	mystore "github.com/locklab/locklab/store/mysql"
	pgstore "github.com/locklab/locklab/store/postgres"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

// A ceiling is the cheapest round trip a server offers through the client
// its strategies use: no lock cycle on that server, which takes at least
// one such trip, can run faster. Each cell is measured interleaved with
// its server's ceiling.
type ceiling struct {
	name string // "redis SET", "postgres SELECT 1", …
	make maker
}

// ceilingOf is the ceiling of a strategy's server, and false for a lock
// with no server round trip (a file, a semaphore).
func ceilingOf(st *store.Store, server string, c redis.StringCmdable, ap bool) (ceiling, bool) {
	switch server {
	case string(lock.ServerRedis):
		name := "redis SET"
		if ap {
			name += AutoPipelined
		}
		return ceiling{name, setMaker(st, c)}, true
	case string(lock.ServerPostgres):
		return ceiling{"postgres SELECT 1", serverMaker(st, server, func(ctx context.Context, v any, _ string) error {
			var one int
			return v.(*pgstore.Conn).Pool.QueryRow(ctx, "SELECT 1").Scan(&one)
		})}, true
	case string(lock.ServerMySQL):
		return ceiling{"mariadb DO 1", serverMaker(st, server, func(ctx context.Context, v any, _ string) error {
			_, err := v.(*mystore.Conn).DB.ExecContext(ctx, "DO 1")
			return err
		})}, true
	case string(lock.ServerMemcached):
		return ceiling{"memcached get", serverMaker(st, server, func(_ context.Context, v any, key string) error {
			_, err := v.(*mcstore.Conn).Meta.Has(st.Key(key))
			return err
		})}, true
	case string(lock.ServerEtcd):
		return ceiling{"etcd Put", serverMaker(st, server, func(ctx context.Context, v any, key string) error {
			e := v.(*etcdstore.Conn)
			_, err := e.Client.Put(ctx, e.Prefix+key, "1")
			return err
		})}, true
	}
	return ceiling{}, false
}

// serverMaker cycles one call on the store's server of the kind, on a key
// of the worker's own.
func serverMaker(st *store.Store, kind string, call func(ctx context.Context, srv any, key string) error) maker {
	return func(w int) func(context.Context, int) (cycle, error) {
		return func(_ context.Context, i int) (cycle, error) {
			srv, err := st.Server(kind)
			if err != nil {
				return nil, err
			}
			key := fmt.Sprintf("bench:ceiling:%d:%d", w, i)
			return func(ctx context.Context) (time.Duration, error) {
				t := time.Now()
				err := call(ctx, srv, key)
				return time.Since(t), err
			}, nil
		}
	}
}

// Env is where and when the bench ran: what its figures depend on.
type Env struct {
	Locklab   string            `json:"locklab"` // version
	Commit    string            `json:"commit"`  // "unknown" when built without VCS stamping
	Go        string            `json:"go"`
	OS        string            `json:"os"` // GOOS/GOARCH, kernel
	CPU       string            `json:"cpu"`
	Cores     int               `json:"cores"`
	LoadStart string            `json:"load_average_start"` // 1, 5, 15 minutes
	LoadEnd   string            `json:"load_average_end"`
	Start     string            `json:"start"` // RFC 3339, UTC
	End       string            `json:"end"`
	Servers   map[string]string `json:"servers"` // server → its version
}

// environment is the machine's description now; the servers' versions and
// the end are filled later.
func environment(version string) Env {
	e := Env{Locklab: version, Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		Cores: runtime.NumCPU(), LoadStart: loadAverage(), Start: time.Now().UTC().Format(time.RFC3339),
		CPU: "unknown", Commit: "unknown", Servers: map[string]string{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		modified := false
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				e.Commit = s.Value
			case s.Key == "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && e.Commit != "unknown" {
			e.Commit += "+modified"
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.OS += " " + clean(string(b), 64)
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPU = clean(v, 96)
				break
			}
		}
	}
	return e
}

// loadAverage is the 1, 5 and 15 minutes' load average, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// serverVersions asks each server the bench used its version.
func serverVersions(ctx context.Context, st *store.Store, used map[string]bool) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out := map[string]string{}
	out["redis"] = "unknown"
	if st.Kind() == store.Embedded {
		out["redis"] = "embedded (miniredis)"
	} else if info, err := st.Client().Info(ctx, "server").Result(); err == nil {
		for line := range strings.Lines(info) {
			if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
				out["redis"] = clean(v, 64)
			}
		}
	}
	ask := func(kind string, f func(v any) (string, error)) {
		if !used[kind] {
			return
		}
		out[kind] = "unknown"
		if v, err := st.Server(kind); err == nil {
			if s, err := f(v); err == nil {
				out[kind] = clean(s, 64)
			}
		}
	}
	ask(store.ServerPostgres, func(v any) (s string, err error) {
		err = v.(*pgstore.Conn).Pool.QueryRow(ctx, "SHOW server_version").Scan(&s)
		return s, err
	})
	ask(store.ServerMySQL, func(v any) (s string, err error) {
		err = v.(*mystore.Conn).DB.QueryRowContext(ctx, "SELECT VERSION()").Scan(&s)
		return s, err
	})
	ask(store.ServerMemcached, func(v any) (string, error) { return v.(*mcstore.Conn).Meta.Version() })
	ask(store.ServerEtcd, func(v any) (string, error) {
		e := v.(*etcdstore.Conn)
		eps := e.Client.Endpoints()
		if len(eps) == 0 {
			return "", fmt.Errorf("no endpoint")
		}
		r, err := e.Client.Status(ctx, eps[0])
		if err != nil {
			return "", err
		}
		return r.Version, nil
	})
	return out
}

// clean is a server's or the system's word, trimmed, without control
// characters, at most n bytes.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > n {
		s = s[:n]
	}
	return s
}
