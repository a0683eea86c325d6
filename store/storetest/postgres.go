package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a PostgreSQL server the test started.
type Postgres struct {
	URL string
}

// StartPostgres initialises a database cluster in a temp dir and starts
// postgres on a free loopback port (its unix socket in the same dir), as
// the postgres user when the test runs as root; it is stopped and removed
// when tb ends. Without postgres the test is skipped, or failed under
// LOCKLAB_REQUIRE_SERVERS=1.
func StartPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	dirs := []string{"/usr/lib/postgresql/*/bin"}
	initdb, server := findBin("initdb", dirs...), findBin("postgres", dirs...)
	if initdb == "" || server == "" {
		missing(tb, "postgres and initdb on PATH or in /usr/lib/postgresql/*/bin", "apt-get install -y postgresql")
	}
	as := unprivileged("postgres")
	dir := serverDir(tb, "locklab-pg-", as)
	tb.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	if err := run(as, initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--no-instructions"); err != nil {
		tb.Fatalf("initdb: %v", err)
	}
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		p, err := startProc(as, "", server, "-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=400")
		if err != nil {
			tb.Fatal(err)
		}
		url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=20", port)
		err = waitFor(p, 30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				return err
			}
			return c.Close(ctx)
		})
		if err == nil {
			tb.Cleanup(p.stop)
			return &Postgres{URL: url}
		}
		p.stop()
		last = err
	}
	tb.Fatalf("start postgres: %v", last)
	return nil
}
